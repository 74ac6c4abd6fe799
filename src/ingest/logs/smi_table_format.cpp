#include "ingest/logs/smi_table_format.hpp"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <set>

#include "core/error.hpp"
#include "core/version.hpp"
#include "ingest/logs/local_time.hpp"
#include "ingest/logs/log_reader.hpp"
#include "ingest/logs/log_run.hpp"
#include "ingest/logs/log_tally.hpp"
#include "ingest/logs/log_text.hpp"
#include "ingest/logs/smi_table_parse.hpp"

namespace gpuscope::ingest {
namespace {

namespace fs = std::filesystem;
using smi_table::GpuBlock;
using smi_table::ProcessRow;
using smi_table::Reading;

constexpr double kMiB = 1024.0 * 1024.0;  // nvidia-smi's MiB

// Where the reader is in a snapshot, in the order nvidia-smi prints it.
enum class Part {
  Before,         // no date line yet
  Date,           // watch's header read: the date line comes next
  Top,            // the date line read: the banner and the GPU table's header come next
  GpuHeader,      // the GPU table's header rows, up to its '=' rule
  Gpus,           // the GPUs' blocks
  Mig,            // the MIG devices table (left out)
  ProcessHeader,  // the process table's header rows, up to its '=' rule
  Processes,      // the process rows, up to the closing rule
  Done,           // a whole snapshot read
};

bool is_open(Part part) {
  return part != Part::Before && part != Part::Date && part != Part::Done;
}

// What a snapshot holds until its process table closes: nothing of it is written before.
struct Snapshot {
  std::size_t line = 0;  // its date line
  std::int64_t wall_ns = 0;
  std::optional<smi_table::Banner> banner;
  std::vector<std::pair<GpuBlock, std::size_t>> gpus;  // and the line each block began at
  std::vector<std::pair<ProcessRow, std::size_t>> processes;
  bool mig_table = false;
};

// "N/A" and the like, as the note on a column without a value says them.
std::string absent_why(const std::string& word) {
  if (word == "N/A") return "N/A (not supported, or not read)";
  if (word == "ERR!") return "ERR! (nvidia-smi could not read it)";
  if (word == "Off") return "Off (ECC disabled)";
  return word;
}

// The file name of a path as the process table shows it ("/usr/bin/python3": "python3").
std::string base_name(const std::string& name) {
  const auto slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

class TableLog : LogReader {
 public:
  TableLog(const fs::path& path, const ReadOptions& options, RunTarget& target)
      : LogReader(path, options, target) {}

  void read();

 private:
  void handle(std::string_view text);
  void leave_open_out();
  void start(const LocalDateTime& local);
  void top(std::string_view text);
  void gpu_header(std::string_view text);
  void gpus(std::string_view text);
  void end_block();
  void table_title(std::string_view title);
  void process_header(std::string_view text);
  void processes(std::string_view text);
  void commit();
  void write_gpu(LogRun& run, const GpuBlock& g, std::size_t line);
  void describe(LogRun& run, const GpuBlock& g);
  void write_processes(LogRun& run);
  void reading(SampleRow& row, Metric metric, const Reading& r, double scale,
               const std::string& column);
  std::optional<LocalDateTime> later_time(std::string_view line) const;
  LogRun& run();
  void finish();

  Part part_ = Part::Before;
  Snapshot snap_;
  std::vector<std::vector<std::string>> block_;  // the rows of the GPU block being read
  std::size_t block_line_ = 0;
  std::size_t header_rows_ = 0;  // rows per GPU, from the header
  bool gi_ci_ = false;           // the process table has GI and CI columns
  std::string scratch_;
  std::vector<std::string_view> cells_;
  std::string host_;
  std::unique_ptr<LogRun> run_;
  LaterTimes later_ = later_times([this](std::string_view line) { return later_time(line); });
  std::size_t lead_lines_ = 0;                     // table lines before the first date line
  std::vector<std::size_t> cut_;                   // date lines of snapshots left out, cut off
  std::vector<std::size_t> empty_;                 // date lines of "No devices were found"
  std::set<std::string> cut_names_;                // GPU names nvidia-smi cut to fit
  std::map<unsigned, std::string> process_names_;  // pid: the name it was last shown with
  std::size_t snapshots_ = 0, mig_tables_ = 0, mig_process_rows_ = 0, cut_process_names_ = 0;
  std::string driver_;
  std::set<std::string> other_drivers_;
};

void TableLog::read() {
  std::string_view text;
  while (next_log_line(lines_, text, target_.notes())) handle(text);
  finish();
}

void TableLog::handle(std::string_view raw) {
  const std::string_view text = smi_table::clean_line(raw, scratch_);
  if (text.empty()) return;
  if (auto host = smi_table::parse_watch_header(text)) {
    leave_open_out();
    if (!host->empty()) host_ = *host;
    part_ = Part::Date;
    return;
  }
  if (auto local = smi_table::parse_date_line(text)) {
    leave_open_out();
    start(*local);
    return;
  }
  switch (part_) {
    case Part::Before:
      if (text.front() != '|' && text.front() != '+') {
        bad(fmt::format("'{}' is no line of nvidia-smi's table", text),
            "a log of nvidia-smi's table begins with its date line (\"Wed Nov 25 22:40:11 "
            "2026\"); docs/logs.md lists the formats gpuscope reads");
      }
      ++lead_lines_;  // the log begins inside a snapshot: its rest is not read
      return;
    case Part::Date:
      bad("watch's header is not followed by nvidia-smi's date line",
          "log `watch nvidia-smi` itself, not another command");
    case Part::Top:
      return top(text);
    case Part::GpuHeader:
      return gpu_header(text);
    case Part::Gpus:
      return gpus(text);
    case Part::Mig:
      if (smi_table::split_row(text, cells_) && cells_.size() == 1) table_title(cells_[0]);
      return;
    case Part::ProcessHeader:
      return process_header(text);
    case Part::Processes:
      return processes(text);
    case Part::Done:
      bad(fmt::format("'{}' after a whole snapshot, before the next date line", text));
  }
}

// A snapshot still open when the next begins (or the file ends) was cut off: left out whole.
void TableLog::leave_open_out() {
  if (is_open(part_)) cut_.push_back(snap_.line);
  part_ = Part::Done;
  block_.clear();
}

void TableLog::start(const LocalDateTime& local) {
  snap_ = {};
  snap_.line = lines_.number();
  const auto ns = utc_ns_of(local, later_);
  if (!ns) bad("the date line is no date");
  snap_.wall_ns = *ns;
  part_ = Part::Top;
}

void TableLog::top(std::string_view text) {
  if (smi_table::is_rule(text)) return;
  if (text == "No devices were found") {
    empty_.push_back(snap_.line);
    part_ = Part::Done;
    return;
  }
  if (!smi_table::split_row(text, cells_)) {
    bad(fmt::format("'{}' is no line of nvidia-smi's table", text));
  }
  if (cells_.size() == 1) {
    snap_.banner = smi_table::parse_banner(cells_[0]);
    if (!snap_.banner) bad(fmt::format("'{}' is no NVIDIA-SMI banner", cells_[0]));
    return;
  }
  if (!snap_.banner) bad("a GPU table without its NVIDIA-SMI banner line");
  if (cells_.size() != 3 || cells_[0].rfind("GPU", 0) != 0 ||
      cells_[1].find("Bus-Id") == std::string_view::npos) {
    bad(fmt::format("'{}' is no header of nvidia-smi's GPU table", text));
  }
  header_rows_ = 1;
  part_ = Part::GpuHeader;
}

void TableLog::gpu_header(std::string_view text) {
  if (smi_table::is_rule(text) && text.find('=') != std::string_view::npos) {
    if (header_rows_ < 2 || header_rows_ > 3) {
      bad(fmt::format("a GPU table header of {} rows (nvidia-smi prints 2 or 3)", header_rows_));
    }
    part_ = Part::Gpus;
    return;
  }
  if (!smi_table::split_row(text, cells_) || cells_.size() != 3 || ++header_rows_ > 3) {
    bad(fmt::format("'{}' is no header of nvidia-smi's GPU table", text));
  }
}

void TableLog::gpus(std::string_view text) {
  if (smi_table::is_rule(text)) {
    if (!block_.empty()) end_block();
    return;
  }
  if (!smi_table::split_row(text, cells_)) {
    bad(fmt::format("'{}' is no line of nvidia-smi's table", text));
  }
  if (cells_.size() == 1) {
    if (!block_.empty()) bad("a GPU's block without its closing rule");
    return table_title(cells_[0]);
  }
  if (block_.empty()) block_line_ = lines_.number();
  block_.emplace_back(cells_.begin(), cells_.end());
  if (block_.size() > header_rows_) {
    bad(fmt::format("a GPU's block of more rows than the header's {}", header_rows_));
  }
}

void TableLog::end_block() {
  line_ = block_line_;
  if (block_.size() != header_rows_) {
    bad(fmt::format("a GPU's block of {} rows where the header has {}", block_.size(),
                    header_rows_));
  }
  std::string why;
  auto g = smi_table::parse_gpu_block(block_, why);
  if (!g) bad(why);
  for (const auto& [other, at] : snap_.gpus) {
    if (other.index == g->index) bad(fmt::format("GPU {} twice in one snapshot", g->index));
  }
  snap_.gpus.emplace_back(std::move(*g), block_line_);
  block_.clear();
  line_ = 0;
}

// "Processes:" or "MIG devices:": the table that comes after the GPUs'.
void TableLog::table_title(std::string_view title) {
  if (title.rfind("Processes:", 0) == 0) {
    part_ = Part::ProcessHeader;
    gi_ci_ = false;
  } else if (title.rfind("MIG devices:", 0) == 0 && part_ == Part::Gpus) {
    snap_.mig_table = true;
    part_ = Part::Mig;
  } else if (part_ != Part::Mig) {
    bad(fmt::format("'{}' is no table nvidia-smi prints after the GPUs'", title));
  }
}

void TableLog::process_header(std::string_view text) {
  if (smi_table::is_rule(text) && text.find('=') != std::string_view::npos) {
    part_ = Part::Processes;
    return;
  }
  if (!smi_table::split_row(text, cells_) || cells_.size() != 1) {
    bad(fmt::format("'{}' is no header of nvidia-smi's process table", text));
  }
  std::vector<std::string_view> words;
  split_blanks(cells_[0], words);
  for (auto word : words) gi_ci_ = gi_ci_ || word == "GI";
}

void TableLog::processes(std::string_view text) {
  if (smi_table::is_rule(text)) {
    commit();
    part_ = Part::Done;
    return;
  }
  if (!smi_table::split_row(text, cells_) || cells_.size() != 1) {
    bad(fmt::format("'{}' is no row of nvidia-smi's process table", text));
  }
  if (cells_[0] == "No running processes found") return;
  std::string why;
  auto p = smi_table::parse_process_row(cells_[0], gi_ci_, why);
  if (!p) bad(why);
  bool shown = false;
  for (const auto& [g, at] : snap_.gpus) shown = shown || g.index == p->gpu;
  if (!shown) bad(fmt::format("a process on GPU {}, which the snapshot does not show", p->gpu));
  snap_.processes.emplace_back(std::move(*p), lines_.number());
}

void TableLog::commit() {
  LogRun& r = run();
  const std::string& driver = snap_.banner->driver_version;
  if (driver_.empty()) {
    driver_ = driver;
    r.info().driver_version = driver;
  } else if (driver != driver_) {
    other_drivers_.insert(driver);
  }
  for (const auto& [g, line] : snap_.gpus) write_gpu(r, g, line);
  write_processes(r);
  mig_tables_ += snap_.mig_table ? 1U : 0U;
  ++snapshots_;
}

void TableLog::reading(SampleRow& row, Metric metric, const Reading& r, double scale,
                       const std::string& column) {
  if (r.value) {
    row.set(metric, *r.value * scale);
  } else {
    ++tally_.absent[column][absent_why(r.absent)];
  }
}

void TableLog::write_gpu(LogRun& run, const GpuBlock& g, std::size_t line) {
  SampleRow row;
  row.device_index = g.index;
  row.wall_ns = snap_.wall_ns;
  reading(row, Metric::TemperatureC, g.temperature_c, 1, "Temp");
  reading(row, Metric::PowerW, g.power_w, 1, "Pwr:Usage");
  reading(row, Metric::PowerLimitW, g.power_cap_w, 1, "Pwr:Cap");
  reading(row, Metric::MemoryUsedBytes, g.memory_used_mib, kMiB, "Memory-Usage");
  reading(row, Metric::GpuUtilPct, g.gpu_util_pct, 1, "GPU-Util");
  run.push(row, static_cast<std::int64_t>(line));
  if (g.ecc_uncorrected.value) {
    HealthRow health;
    health.device_index = g.index;
    health.wall_ns = snap_.wall_ns;
    health.set(HealthMetric::EccUncorrectedVolatile, *g.ecc_uncorrected.value);
    run.push(health);
  } else {
    ++tally_.absent["Volatile Uncorr. ECC"][absent_why(g.ecc_uncorrected.absent)];
  }
  describe(run, g);
}

// The GPU's facts from its first snapshot.
void TableLog::describe(LogRun& run, const GpuBlock& g) {
  DeviceDescription& d = run.device(g.index);
  if (d.name) return;
  d.name = g.name;
  if (g.name_cut) cut_names_.insert(g.name);
  d.pci_bus_id = g.bus_id;
  if (g.memory_total_mib.value) {
    d.memory_total_bytes = static_cast<std::uint64_t>(*g.memory_total_mib.value * kMiB);
  }
  d.enforced_power_limit_w = g.power_cap_w.value;
  if (g.mig_mode == "Enabled" || g.mig_mode == "Disabled") d.mig_enabled = g.mig_mode == "Enabled";
}

void TableLog::write_processes(LogRun& run) {
  for (const auto& [p, line] : snap_.processes) {
    auto [known, added] = process_names_.try_emplace(p.pid, p.name);
    if (added || known->second != p.name) {  // first seen, or its pid reused by another
      known->second = p.name;
      GpuProcess process;
      process.pid = p.pid;
      process.first_wall_ns = snap_.wall_ns;
      process.command = base_name(p.name);
      process.command_line = p.name;
      run.push(std::move(process));
      cut_process_names_ += p.name.rfind("...", 0) == 0 ? 1U : 0U;
    }
    ProcessSample sample;
    sample.device_index = p.gpu;
    sample.wall_ns = snap_.wall_ns;
    sample.pid = p.pid;
    if (p.memory_mib.value) {
      sample.used_memory_bytes = static_cast<std::uint64_t>(*p.memory_mib.value * kMiB);
    } else {
      ++tally_.absent["process GPU Memory"][absent_why(p.memory_mib.absent)];
    }
    run.push(sample);
    mig_process_rows_ += p.gi ? 1U : 0U;
  }
}

std::optional<LocalDateTime> TableLog::later_time(std::string_view line) const {
  std::string scratch;
  return smi_table::parse_date_line(smi_table::clean_line(line, scratch));
}

LogRun& TableLog::run() {
  if (run_) return *run_;
  RunInfo info;
  info.label = path_.filename().string();
  info.host = host_;
  info.tool_version = fmt::format("nvidia-smi (imported by gpuscope {})", kVersion);
  info.origin = fmt::format("nvidia-smi table log {}, local times read in {}", path_.string(),
                            zone_.description());
  run_ = std::make_unique<LogRun>(target_, std::move(info));
  return *run_;
}

void TableLog::finish() {
  const std::string name = path_.string();
  auto& notes = target_.notes();
  if (is_open(part_)) {
    notes.push_back(fmt::format(
        "{}: the last snapshot (from line {}) is cut off at the end of the file: left out", name,
        snap_.line));
  }
  if (!cut_.empty()) {
    notes.push_back(fmt::format(
        "{}: {} snapshot{} cut off by the next one (from line{} {}): left out", name, cut_.size(),
        cut_.size() == 1 ? "" : "s", cut_.size() == 1 ? "" : "s", line_list(cut_)));
  }
  if (lead_lines_ > 0) {
    notes.push_back(fmt::format(
        "{}: the log begins inside a snapshot: its first {} table lines, before the first date "
        "line, left out",
        name, lead_lines_));
  }
  if (!empty_.empty()) {
    notes.push_back(fmt::format("{}: \"No devices were found\" at line{} {}", name,
                                empty_.size() == 1 ? "" : "s", line_list(empty_)));
  }
  for (const auto& cut : cut_names_) {
    notes.push_back(fmt::format(
        "{}: the GPU name '{}' is as the table shows it, cut by nvidia-smi to fit its column "
        "(nvidia-smi -L or --query-gpu=name gives it whole)",
        name, cut));
  }
  if (!other_drivers_.empty()) {
    std::string others;
    for (const auto& d : other_drivers_) others += (others.empty() ? "" : ", ") + d;
    notes.push_back(
        fmt::format("{}: driver {} first, then {} (logs appended across a driver "
                    "update); the run keeps the first",
                    name, driver_, others));
  }
  if (mig_tables_ > 0) {
    tally_.left_out["MIG devices"] = "tables gpuscope does not read from this log";
  }
  if (mig_process_rows_ > 0) {
    tally_.left_out["process GI, CI"] =
        "a MIG process's instance (its samples are its GPU's, left to the GPU)";
  }
  if (cut_process_names_ > 0) {
    notes.push_back(fmt::format(
        "{}: {} process name{} cut by nvidia-smi to fit its column (\"...\" at the start), kept "
        "as shown",
        name, cut_process_names_, cut_process_names_ == 1 ? "" : "s"));
  }
  if (snapshots_ > 0) {
    for (const char* column :
         {"Fan", "Perf", "Persistence-M", "Disp.A", "Compute M.", "process Type"}) {
      tally_.left_out[column] = "nvidia-smi table fields gpuscope has no column for";
    }
  }
  tally_.say(path_, "", notes);
  notes.push_back(fmt::format("{}: local times read in {}", name, zone_.description()));
  const std::vector<std::string> problems = {
      "imported from nvidia-smi's table: whole watts, times to the whole second of its date line, "
      "and no energy counter (energy is its power integrated between snapshots)",
      "no SM, tensor or DRAM activity in nvidia-smi's table: the analysis rests on GPU-Util "
      "(utilization.gpu)"};
  if (!run_ || !run_->finish(problems)) say_no_samples();
}

}  // namespace

std::string_view SmiTableFormat::inputs() const {
  return "logs of nvidia-smi's table (`nvidia-smi -l S > log`, a loop of nvidia-smi, `watch "
         "nvidia-smi`: a date line, the banner, the GPUs, the processes)";
}

bool SmiTableFormat::recognises(const fs::path& path, const ReadOptions&) const {
  if (!is_foreign_text(path)) return false;
  const std::string head = read_head(path, 16 * 1024);
  std::string scratch;
  std::size_t at = 0;
  int step = 0;  // 0: a watch header or the date line; 1: the date line; 2: a rule; 3: banner
  while (at < head.size()) {
    const std::size_t end = std::min(head.find('\n', at), head.size());
    const std::string_view line =
        smi_table::clean_line(std::string_view(head).substr(at, end - at), scratch);
    at = end + 1;
    if (line.empty()) continue;
    if (step <= 1 && smi_table::parse_date_line(line)) {
      step = 2;
    } else if (step == 0 && smi_table::parse_watch_header(line)) {
      step = 1;
    } else if (step == 0 && (line.front() == '|' || line.front() == '+')) {
      continue;  // a log that begins inside a snapshot (rotated, or cut with tail)
    } else if (step == 2 && smi_table::is_rule(line)) {
      step = 3;
    } else if (step == 3) {
      std::vector<std::string_view> cells;
      return smi_table::split_row(line, cells) && cells.size() == 1 &&
             smi_table::parse_banner(cells[0]).has_value();
    } else {
      return false;
    }
  }
  return false;
}

void SmiTableFormat::read(const std::vector<fs::path>& inputs, const ReadOptions& options,
                          RunTarget& target) const {
  read_each_log<TableLog>(inputs, options, target);
}

}  // namespace gpuscope::ingest
