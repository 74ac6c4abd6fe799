#include "app/gssr_import.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <tuple>

#include "core/error.hpp"
#include "core/version.hpp"
#include "gssr/profile_folder.hpp"
#include "store/gssr_export.hpp"
#include "store/merge.hpp"
#include "store/run_writer.hpp"
#include "util/output_file.hpp"

namespace gpuscope::app {
namespace {

namespace fs = std::filesystem;
constexpr double kMiB = 1024.0 * 1024.0;

// gssr's metric, the catalog metric it becomes and the factor to its unit (docs/gssr.md).
struct Conversion {
  const char* gssr;
  Metric metric;
  double scale;
};
constexpr Conversion kConversions[] = {
    {"gpu_utilization", Metric::GpuUtilPct, 1.0},  // field 203: percent
    {"fb_free", Metric::MemoryFreeBytes, kMiB},    // 251: MiB
    {"fb_used", Metric::MemoryUsedBytes, kMiB},    // 252: MiB
    {"fb_resv", Metric::MemoryReservedBytes, kMiB},
    {"sm_active", Metric::SmActivePct, 100.0},  // 1002: ratio
    {"sm_occupancy", Metric::SmOccupancyPct, 100.0},
    {"tensor_active", Metric::TensorActivePct, 100.0},
    {"dram_active", Metric::DramActivePct, 100.0},
    {"fp64_active", Metric::Fp64ActivePct, 100.0},
    {"fp32_active", Metric::Fp32ActivePct, 100.0},
    {"fp16_active", Metric::Fp16ActivePct, 100.0},
    {"pcie_tx_bytes", Metric::PcieTxBytesPerS, 1.0},  // 1009: bytes/s
    {"pcie_rx_bytes", Metric::PcieRxBytesPerS, 1.0},
    {"nvlink_tx_bytes", Metric::NvlinkTxBytesPerS, 1.0},
    {"nvlink_rx_bytes", Metric::NvlinkRxBytesPerS, 1.0},
};

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

std::optional<int> as_int(const std::string& text) {
  try {
    std::size_t used = 0;
    const long value = std::stol(text, &used);
    if (used == text.size() && value >= 0 && value <= 1'000'000) return static_cast<int>(value);
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

RunInfo run_info(const gssr::Process& p) {
  RunInfo info;
  info.command = words(p.cmd);
  info.label = p.label;
  info.host = p.hostname;
  info.start_wall_ns = std::llround(p.start_time_s * 1e9);
  info.start_mono_ns = 0;  // gssr has no clock per sample: its times are index x interval
  info.tool_version = fmt::format("gssr (imported by gpuscope {})", kVersion);
  info.sampling_interval_ns = std::llround(p.sampling_ms * 1e6);
  info.slurm.job_id = p.job_id;
  info.slurm.step_id = p.step_id;
  info.slurm.rank = static_cast<int>(p.proc_id);
  info.slurm.node_name = p.hostname;
  info.ranks.launcher = "gssr";
  info.ranks.job_id = p.job_id;
  info.ranks.rank = static_cast<int>(p.proc_id);
  info.ranks.node_name = p.hostname;
  return info;
}

// One gssr process into a run database of its own; returns its samples.
std::int64_t write_process(const gssr::Process& p, const fs::path& path,
                           std::vector<std::string>& notes) {
  RunInfo info = run_info(p);
  std::vector<DeviceDescription> devices;
  std::map<std::string, unsigned> index_of;
  for (std::size_t g = 0; g < p.gpus.size(); ++g) {
    DeviceDescription d;
    d.index = static_cast<unsigned>(as_int(p.gpus[g].gpu_id).value_or(static_cast<int>(g)));
    for (const auto& other : devices) {
      if (other.index == d.index) d.index = static_cast<unsigned>(100 + g);  // never two alike
    }
    const auto& total = p.gpus[g].values[*gssr::metric_index("fb_total")];
    for (double v : total) {
      if (std::isfinite(v) && v > 0) {
        d.memory_total_bytes = static_cast<std::uint64_t>(v * kMiB);
        break;
      }
    }
    d.saturation_source = "dcgm";
    d.saturation_detail = "gssr (DCGM profiling fields, as gssr recorded them)";
    index_of[p.gpus[g].gpu_id] = d.index;
    devices.push_back(std::move(d));
  }
  store::WriterOptions options;
  options.flush_interval = std::chrono::milliseconds(60'000);
  auto writer = store::RunWriter::create(path, true, info, devices, options);
  const auto interval_ns = static_cast<double>(info.sampling_interval_ns);
  std::int64_t samples = 0;
  std::size_t longest = 0;
  for (const auto& gpu : p.gpus) {
    std::size_t n = 0;
    for (const auto& series : gpu.values) n = std::max(n, series.size());
    longest = std::max(longest, n);
    for (std::size_t k = 0; k < n; ++k) {
      SampleRow row;
      row.device_index = index_of[gpu.gpu_id];
      row.mono_ns = std::llround(static_cast<double>(k) * interval_ns);
      row.wall_ns = info.start_wall_ns + row.mono_ns;
      for (const Conversion& c : kConversions) {
        const auto& series = gpu.values[*gssr::metric_index(c.gssr)];
        if (k < series.size() && std::isfinite(series[k])) row.set(c.metric, series[k] * c.scale);
      }
      if (row.present.none()) continue;
      writer->push(row);
      ++samples;
    }
  }
  RunEnd end;
  end.status = RunStatus::Finished;
  end.end_mono_ns = std::llround(static_cast<double>(longest) * interval_ns);
  end.end_wall_ns = info.start_wall_ns + end.end_mono_ns;
  end.samples_taken = samples;
  end.problems.push_back(kGssrNotRecorded);
  const auto problems = writer->finish(end);
  notes.insert(notes.end(), problems.begin(), problems.end());
  return samples;
}

}  // namespace

bool is_gssr_input(const fs::path& path) {
  return gssr::is_profile_input(path) || store::is_gssr_export(path);
}

GssrImport import_gssr(const std::vector<fs::path>& inputs, const fs::path& output,
                       bool overwrite) {
  GssrImport result;
  std::vector<gssr::Process> processes;
  std::vector<fs::path> named;
  for (const auto& input : inputs) {
    // One input named twice (two spellings, a link) is read once, as analyze does with files.
    if (std::any_of(named.begin(), named.end(),
                    [&](const fs::path& earlier) { return util::same_file(earlier, input); })) {
      result.notes.push_back(
          fmt::format("{} was named more than once; it is read once", input.string()));
      continue;
    }
    named.push_back(input);
    if (store::is_gssr_export(input)) {
      auto read = store::read_gssr_export(input, result.notes);
      processes.insert(processes.end(), std::make_move_iterator(read.begin()),
                       std::make_move_iterator(read.end()));
    } else if (gssr::is_profile_input(input)) {
      auto read = gssr::read_profile(input);
      result.notes.insert(result.notes.end(), read.notes.begin(), read.notes.end());
      processes.insert(processes.end(), std::make_move_iterator(read.processes.begin()),
                       std::make_move_iterator(read.processes.end()));
    } else {
      throw Error::usage(fmt::format("{} is not gssr data", input.string()), {},
                         "give a gssr profile folder (profile_out_JobID_<job>), a process file "
                         "(*_proc_<p>.json) or the SQLite gssr analyze --export wrote");
    }
  }
  if (processes.empty()) {
    throw Error::usage("the gssr input holds no process with samples", {},
                       "check the folder or file given");
  }
  // The same process from two inputs (a folder and its export): counting it twice would double
  // the job. Said here, naming the inputs, rather than by merge naming temporary files.
  std::map<std::tuple<std::string, std::string, std::int64_t>, const gssr::Process*> seen;
  for (const auto& p : processes) {
    const auto [it, added] = seen.try_emplace({p.job_id, p.step_id, p.proc_id}, &p);
    if (!added) {
      throw Error::usage(
          fmt::format("{} and {} hold the same gssr process (job {}, step {}, process {})",
                      it->second->source, p.source, p.job_id, p.step_id, p.proc_id),
          {}, "give each profile once: its folder or its export, not both");
    }
  }
  // Each process to a file of its own, then merged: merge refuses a process named twice.
  const fs::path dir =
      fs::temp_directory_path() /
      fmt::format("gpuscope-gssr-parts-{}-{}", getpid(), output.filename().string());
  fs::create_directories(dir);
  std::vector<fs::path> parts;
  try {
    for (std::size_t i = 0; i < processes.size(); ++i) {
      const fs::path part = dir / fmt::format("{:06}.db", i);
      result.samples += write_process(processes[i], part, result.notes);
      result.gpus += processes[i].gpus.size();
      parts.push_back(part);
    }
    result.runs = static_cast<std::size_t>(store::merge(output, parts, overwrite).runs);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
    throw;
  }
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  return result;
}

ResolvedInputs::ResolvedInputs(const std::vector<std::string>& inputs) {
  std::vector<fs::path> gssr_inputs;
  for (const auto& input : inputs) {
    std::error_code error;
    const bool ours =
        fs::is_directory(input, error) ? !gssr::is_profile_input(input) : !is_gssr_input(input);
    if (ours) {
      paths_.push_back(input);
    } else {
      gssr_inputs.emplace_back(input);
    }
  }
  if (gssr_inputs.empty()) return;
  // Named after the first input, so that the run tables show where the runs came from.
  temporary_ = fs::temp_directory_path() / fmt::format("gpuscope-gssr-{}", getpid());
  fs::create_directories(temporary_);
  fs::path name = fs::path(gssr_inputs.front()).lexically_normal();
  if (!name.has_filename()) name = name.parent_path();
  const fs::path file = temporary_ / (name.filename().string() + ".db");
  const GssrImport imported = import_gssr(gssr_inputs, file, true);
  for (const auto& note : imported.notes) fmt::print(stderr, "gpuscope: note: {}\n", note);
  paths_.push_back(file.string());
}

ResolvedInputs::~ResolvedInputs() {
  if (temporary_.empty()) return;
  std::error_code ignored;
  fs::remove_all(temporary_, ignored);
}

}  // namespace gpuscope::app
