#include "ingest/logs/smi_query_format.hpp"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <set>
#include <unordered_set>

#include "core/error.hpp"
#include "core/version.hpp"
#include "ingest/logs/local_time.hpp"
#include "ingest/logs/log_reader.hpp"
#include "ingest/logs/log_run.hpp"
#include "ingest/logs/log_tally.hpp"
#include "ingest/logs/log_text.hpp"
#include "ingest/logs/smi_query_parse.hpp"
#include "ingest/logs/smi_table_parse.hpp"
#include "util/number_text.hpp"

namespace gpuscope::ingest {
namespace {

namespace fs = std::filesystem;
using smi_query::KeyLine;
using smi_query::QueryGpu;
using smi_query::QueryProcess;

// One block of the log, held until the next begins (or the file ends): nothing of it is written
// before it is known whole.
struct Block {
  std::size_t line = 0;  // its "NVSMI LOG" line
  std::optional<std::int64_t> wall_ns;
  std::string driver;
  std::optional<unsigned> attached;  // "Attached GPUs"
  std::vector<QueryGpu> gpus;
};

std::string absent_why(const std::string& word) {
  if (word == "N/A") return "N/A (not supported, or not read)";
  if (word == "[N/A]") return "[N/A] (nvidia-smi could not read it)";
  return word;
}

std::string base_name(const std::string& name) {
  const auto slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

std::optional<unsigned> instance_id(std::string_view text) {
  const auto v = util::parse_unsigned(text);
  if (!v || *v > 1000000) return std::nullopt;
  return static_cast<unsigned>(*v);
}

class QueryLog : LogReader {
 public:
  QueryLog(const fs::path& path, const ReadOptions& options, RunTarget& target)
      : LogReader(path, options, target) {}

  void read();

 private:
  void handle(std::string_view raw);
  void top_line(const KeyLine& k, std::string_view text);
  void gpu_line(const KeyLine& k);
  void process_line(QueryGpu& gpu, const KeyLine& k);
  QueryProcess& current_process(QueryGpu& gpu, std::string_view key);
  void close_block(bool at_end);
  bool whole(const Block& b) const;
  void commit();
  void write_gpu(LogRun& run, const QueryGpu& gpu, unsigned index);
  void write_processes(LogRun& run, const QueryGpu& gpu, unsigned index);
  std::optional<LocalDateTime> later_time(std::string_view line) const;
  LogRun& run();
  void finish();

  std::optional<Block> block_;
  std::vector<std::pair<std::size_t, std::string>> keys_;  // the open sections: indent, key
  bool cut_at_end_ = false;                                // the last line had no line end
  std::unique_ptr<LogRun> run_;
  LaterTimes later_ = later_times([this](std::string_view line) { return later_time(line); });
  std::size_t lead_lines_ = 0;
  std::vector<std::size_t> cut_;  // blocks left out, cut off by the next
  std::optional<std::size_t> cut_last_;
  std::string cut_last_why_;
  std::map<unsigned, std::string> bus_of_;  // index: the bus id of the first whole block
  std::unordered_set<std::string> seen_paths_;
  std::map<unsigned, std::string> process_names_;
  std::size_t blocks_ = 0, mig_process_rows_ = 0;
  std::string driver_;
  std::set<std::string> other_drivers_;
};

void QueryLog::read() {
  std::string_view line;
  while (lines_.next(line)) {
    if (lines_.unterminated()) {  // nvidia-smi ends every line: this one was cut mid-write
      cut_at_end_ = !trim(line).empty();
      break;
    }
    handle(line);
  }
  close_block(true);
  finish();
}

void QueryLog::handle(std::string_view raw) {
  const std::string_view text = trim(raw);
  if (text.empty()) return;
  if (text == smi_query::kBlockHeader) {
    close_block(false);
    block_.emplace();
    block_->line = lines_.number();
    return;
  }
  const auto k = smi_query::split_key_line(raw);
  if (!block_) {
    // The log begins inside a block (rotated, or cut with tail): its lines up to the first
    // "NVSMI LOG" are not read.
    if (!k->has_value && k->indent == 0 && !smi_query::parse_gpu_line(text)) {
      bad(fmt::format("'{}' is no line of nvidia-smi -q", text),
          "a log of nvidia-smi -q begins with \"==============NVSMI LOG==============\"; "
          "docs/logs.md lists the formats gpuscope reads");
    }
    ++lead_lines_;
    return;
  }
  if (k->indent == 0) return top_line(*k, text);
  if (block_->gpus.empty()) {
    bad(fmt::format("'{}' is indented, but no GPU's section is open", text),
        "each GPU's keys follow its \"GPU 00000000:07:00.0\" line");
  }
  gpu_line(*k);
}

// A line of the block's first level: its Timestamp, driver, count of GPUs, or a GPU's line.
void QueryLog::top_line(const KeyLine& k, std::string_view text) {
  if (!k.has_value) {
    const auto bus = smi_query::parse_gpu_line(text);
    if (!bus) bad(fmt::format("'{}' is no line of nvidia-smi -q", text));
    QueryGpu& gpu = block_->gpus.emplace_back();
    gpu.bus_id = *bus;
    gpu.line = lines_.number();
    keys_.clear();
    return;
  }
  const bool before_gpus = block_->gpus.empty();
  if (k.key == "Timestamp") {
    if (!before_gpus || block_->wall_ns) bad("a second Timestamp in one block");
    const auto local = smi_table::parse_date_line(k.value);
    if (!local) {
      bad(fmt::format("'{}' is no date (nvidia-smi prints \"Wed Nov 25 22:40:11 2026\")", k.value));
    }
    const auto ns = utc_ns_of(*local, later_);
    if (!ns) bad(fmt::format("'{}' is no date", k.value));
    block_->wall_ns = *ns;
  } else if (k.key == "Driver Version") {
    block_->driver = std::string(k.value);
  } else if (k.key == "Attached GPUs") {
    const auto n = util::parse_unsigned(k.value);
    if (!n || *n > 4096) bad(fmt::format("'{}' is no count of GPUs", k.value));
    block_->attached = static_cast<unsigned>(*n);
  } else if (!before_gpus) {
    bad(fmt::format("'{}' at the first level inside a GPU's section", text),
        "a GPU's keys are indented; a new block begins with its NVSMI LOG line");
  }
}

// An indented line: a key of the open GPU at its path below the GPU.
void QueryLog::gpu_line(const KeyLine& k) {
  QueryGpu& gpu = block_->gpus.back();
  while (!keys_.empty() && keys_.back().first >= k.indent) keys_.pop_back();
  std::string path;
  for (const auto& [indent, key] : keys_) path += key + "/";
  path += k.key;
  if (keys_.empty()) gpu.last_top = std::string(k.key);
  keys_.emplace_back(k.indent, std::string(k.key));
  if (path == "Processes") {
    gpu.reached_processes = true;
    if (k.has_value && !k.value.empty() && k.value != "None") {
      ++tally_.absent["Processes"][absent_why(std::string(k.value))];
    }
    return;
  }
  if (path.rfind("Processes/", 0) == 0) return process_line(gpu, k);
  if (k.has_value) {
    gpu.values.try_emplace(std::move(path),
                           smi_query::QueryGpu::Value{std::string(k.value), lines_.number()});
  }
}

QueryProcess& QueryLog::current_process(QueryGpu& gpu, std::string_view key) {
  if (gpu.processes.empty()) {
    bad(fmt::format("a process's {} before its GPU instance ID or Process ID", key));
  }
  return gpu.processes.back();
}

// The keys of the Processes section: each process begins with its "GPU instance ID" (drivers
// that know MIG) or its "Process ID".
void QueryLog::process_line(QueryGpu& gpu, const KeyLine& k) {
  if (!k.has_value) return;
  const std::string value(k.value);
  if (k.key == "GPU instance ID") {
    gpu.processes.emplace_back().line = lines_.number();
    gpu.processes.back().gi = instance_id(value);
  } else if (k.key == "Compute instance ID") {
    current_process(gpu, k.key).ci = instance_id(value);
  } else if (k.key == "Process ID") {
    if (gpu.processes.empty() || gpu.processes.back().pid) {
      gpu.processes.emplace_back().line = lines_.number();
    }
    const auto pid = util::parse_unsigned(value);
    if (!pid || *pid == 0 || *pid > 0xFFFFFFFFULL) {
      bad(fmt::format("'{}' is no process id", value));
    }
    gpu.processes.back().pid = static_cast<unsigned>(*pid);
  } else if (k.key == "Type") {
    current_process(gpu, k.key).type = value;
  } else if (k.key == "Name") {
    current_process(gpu, k.key).name = value;
  } else if (k.key == "Used GPU Memory") {
    QueryProcess& p = current_process(gpu, k.key);
    p.memory = value;
    p.has_memory = true;
  }
}

// Whether every GPU the block announced was printed through its processes.
bool QueryLog::whole(const Block& b) const {
  if (!b.wall_ns || !b.attached || b.gpus.size() != *b.attached || b.gpus.empty()) return false;
  for (const auto& gpu : b.gpus) {
    if (!gpu.reached_processes) return false;
  }
  const QueryGpu& last = b.gpus.back();
  return last.last_top != "Processes" || last.processes.empty() || last.processes.back().has_memory;
}

void QueryLog::close_block(bool at_end) {
  if (!block_) return;
  if (block_->attached && block_->gpus.size() > *block_->attached) {
    line_ = block_->gpus.back().line;
    bad(fmt::format("a block of {} GPUs where its Attached GPUs says {}", block_->gpus.size(),
                    *block_->attached));
  }
  if (whole(*block_) && !(at_end && cut_at_end_)) {
    commit();
  } else if (at_end) {
    cut_last_ = block_->line;
    cut_last_why_ = fmt::format("{} of {} GPUs", block_->gpus.size(),
                                block_->attached ? std::to_string(*block_->attached) : "?");
  } else {
    cut_.push_back(block_->line);
  }
  block_.reset();
  keys_.clear();
}

void QueryLog::commit() {
  LogRun& r = run();
  if (driver_.empty()) {
    driver_ = block_->driver;
    r.info().driver_version = driver_;
  } else if (block_->driver != driver_) {
    other_drivers_.insert(block_->driver);
  }
  for (unsigned index = 0; index < block_->gpus.size(); ++index) {
    const QueryGpu& gpu = block_->gpus[index];
    const auto [known, added] = bus_of_.try_emplace(index, gpu.bus_id);
    if (!added && known->second != gpu.bus_id) {
      line_ = gpu.line;
      bad(fmt::format("GPU {} (the block's GPU number {}) is {} here, {} in earlier blocks",
                      gpu.bus_id, index, gpu.bus_id, known->second),
          "the GPUs' indexes are their order in each block: a log of different GPUs (nvidia-smi "
          "-q -i, or another node) is read as a file of its own");
    }
    write_gpu(r, gpu, index);
    write_processes(r, gpu, index);
  }
  ++blocks_;
}

void QueryLog::write_gpu(LogRun& run, const QueryGpu& gpu, unsigned index) {
  smi_query::GpuReadings readings;
  std::string why;
  std::size_t line = 0;
  if (!smi_query::read_gpu(gpu, readings, why, line)) {
    line_ = line;
    bad(why);
  }
  readings.row.device_index = index;
  readings.row.wall_ns = *block_->wall_ns;
  run.push(readings.row, static_cast<std::int64_t>(gpu.line));
  if (readings.health.present.any()) {
    readings.health.device_index = index;
    readings.health.wall_ns = *block_->wall_ns;
    run.push(readings.health);
  }
  for (const auto& [field, word] : readings.absent) ++tally_.absent[field][absent_why(word)];
  for (const auto& [path, value] : gpu.values) {
    if (!seen_paths_.insert(path).second) continue;
    std::string name = smi_query::left_out_name(path);
    if (!name.empty()) {
      tally_.left_out[std::move(name)] = "nvidia-smi -q keys gpuscope has no column for";
    }
  }
  DeviceDescription& d = run.device(index);
  if (d.name || d.pci_bus_id) return;  // the facts of its first block
  if (!smi_query::describe_gpu(gpu, d, why, line)) {
    line_ = line;
    bad(why);
  }
}

void QueryLog::write_processes(LogRun& run, const QueryGpu& gpu, unsigned index) {
  for (const QueryProcess& p : gpu.processes) {
    if (!p.pid) {
      line_ = p.line;
      bad("a process without its Process ID");
    }
    auto [known, added] = process_names_.try_emplace(*p.pid, p.name);
    if (added || known->second != p.name) {  // first seen, or its pid reused by another
      known->second = p.name;
      GpuProcess process;
      process.pid = *p.pid;
      process.first_wall_ns = *block_->wall_ns;
      if (!p.name.empty()) {
        process.command = base_name(p.name);
        process.command_line = p.name;
      }
      run.push(std::move(process));
    }
    ProcessSample sample;
    sample.device_index = index;
    sample.wall_ns = *block_->wall_ns;
    sample.pid = *p.pid;
    std::string absent;
    bool bad_memory = false;
    const auto bytes = smi_query::process_memory(p, absent, bad_memory);
    if (bad_memory) {
      line_ = p.line;
      bad(fmt::format("'{}' is no Used GPU Memory of process {} (a number in MiB, or N/A)",
                      p.memory, *p.pid));
    }
    if (bytes) {
      sample.used_memory_bytes = static_cast<std::uint64_t>(*bytes);
    } else {
      ++tally_.absent["process Used GPU Memory"][absent_why(absent)];
    }
    run.push(sample);
    mig_process_rows_ += p.gi ? 1U : 0U;
  }
}

std::optional<LocalDateTime> QueryLog::later_time(std::string_view line) const {
  const auto k = smi_query::split_key_line(line);
  if (!k || k->indent != 0 || k->key != "Timestamp") return std::nullopt;
  return smi_table::parse_date_line(k->value);
}

LogRun& QueryLog::run() {
  if (run_) return *run_;
  RunInfo info;
  info.label = path_.filename().string();
  info.tool_version = fmt::format("nvidia-smi -q (imported by gpuscope {})", kVersion);
  info.origin = fmt::format("nvidia-smi -q log {}, local times read in {}", path_.string(),
                            zone_.description());
  run_ = std::make_unique<LogRun>(target_, std::move(info));
  return *run_;
}

void QueryLog::finish() {
  const std::string name = path_.string();
  auto& notes = target_.notes();
  if (cut_last_) {
    notes.push_back(fmt::format(
        "{}: the last block (from line {}, {} printed) is cut off at the end of the file: left "
        "out",
        name, *cut_last_, cut_last_why_));
  }
  if (!cut_.empty()) {
    notes.push_back(fmt::format(
        "{}: {} block{} cut off by the next one (from line{} {}; fewer GPUs than its Attached "
        "GPUs, or a GPU without its processes: a logger restarted, or nvidia-smi -q -i): left out",
        name, cut_.size(), cut_.size() == 1 ? "" : "s", cut_.size() == 1 ? "" : "s",
        line_list(cut_)));
  }
  if (lead_lines_ > 0) {
    notes.push_back(fmt::format(
        "{}: the log begins inside a block: its first {} lines, before the first NVSMI LOG line, "
        "left out",
        name, lead_lines_));
  }
  if (!other_drivers_.empty()) {
    std::string others;
    for (const auto& d : other_drivers_) others += (others.empty() ? "" : ", ") + d;
    notes.push_back(
        fmt::format("{}: driver {} first, then {} (logs appended across a driver update); the "
                    "run keeps the first",
                    name, driver_, others));
  }
  if (mig_process_rows_ > 0) {
    tally_.left_out["process GPU instance ID, Compute instance ID"] =
        "a MIG process's instance (its samples are its GPU's, left to the GPU)";
  }
  if (blocks_ > 0)
    tally_.left_out["process Type"] = "nvidia-smi -q keys gpuscope has no column for";
  tally_.say(path_, "", notes);
  notes.push_back(fmt::format("{}: local times read in {}", name, zone_.description()));
  const std::vector<std::string> problems = {
      "imported from nvidia-smi -q: times to the whole second of each block's Timestamp, and no "
      "energy counter (energy is its power integrated between blocks)",
      "no SM, tensor or DRAM activity in nvidia-smi -q: the analysis rests on its GPU "
      "utilization (utilization.gpu)"};
  if (!run_ || !run_->finish(problems)) say_no_samples();
}

}  // namespace

std::string_view SmiQueryFormat::inputs() const {
  return "logs of nvidia-smi's detailed query (`nvidia-smi -q -l S > log`, a loop of nvidia-smi "
         "-q: NVSMI LOG blocks of \"Key : Value\" lines, one section per GPU)";
}

bool SmiQueryFormat::recognises(const fs::path& path, const ReadOptions&) const {
  if (!is_foreign_text(path)) return false;
  const std::string head = read_head(path, 16 * 1024);
  std::size_t at = 0;
  bool header = false;
  while (at < head.size()) {
    const std::size_t end = std::min(head.find('\n', at), head.size());
    const std::string_view line = std::string_view(head).substr(at, end - at);
    at = end + 1;
    const auto k = smi_query::split_key_line(line);
    if (!k) continue;
    if (header) {  // the block's first line: its Timestamp
      return k->indent == 0 && k->key == "Timestamp" &&
             smi_table::parse_date_line(k->value).has_value();
    }
    if (trim(line) == smi_query::kBlockHeader) {
      header = true;
    } else if (!k->has_value && k->indent == 0 && !smi_query::parse_gpu_line(k->key)) {
      return false;  // before the first block (a rotated log): key lines only
    } else if (end == head.size()) {
      return false;
    }
  }
  return false;
}

void SmiQueryFormat::read(const std::vector<fs::path>& inputs, const ReadOptions& options,
                          RunTarget& target) const {
  read_each_log<QueryLog>(inputs, options, target);
}

}  // namespace gpuscope::ingest
