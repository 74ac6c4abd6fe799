#include "ingest/tools/gssr_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <tuple>

#include "core/error.hpp"
#include "core/version.hpp"
#include "dcgm/fields.hpp"
#include "ingest/import.hpp"
#include "ingest/tools/gssr_export.hpp"
#include "ingest/tools/gssr_profile.hpp"
#include "ingest/value_screen.hpp"

namespace gpuscope::ingest {
namespace {

namespace fs = std::filesystem;

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

// The GPUs of a process as devices, numbered by gssr's GPU id where it is a number.
std::vector<DeviceDescription> devices_of(const gssr::Process& p,
                                          std::map<std::string, unsigned>& index_of) {
  std::vector<DeviceDescription> devices;
  for (std::size_t g = 0; g < p.gpus.size(); ++g) {
    DeviceDescription d;
    d.index = static_cast<unsigned>(as_int(p.gpus[g].gpu_id).value_or(static_cast<int>(g)));
    for (const auto& other : devices) {
      if (other.index == d.index) d.index = static_cast<unsigned>(100 + g);  // never two alike
    }
    const auto& total = p.gpus[g].values[*gssr::metric_index("fb_total")];
    for (double v : total) {
      if (std::isfinite(v) && v > 0) {
        d.memory_total_bytes = static_cast<std::uint64_t>(v * dcgm::kMiB);  // field 250: MiB
        break;
      }
    }
    d.saturation_source = "dcgm";
    d.saturation_detail = "gssr (DCGM profiling fields, as gssr recorded them)";
    index_of[p.gpus[g].gpu_id] = d.index;
    devices.push_back(std::move(d));
  }
  return devices;
}

// One gssr process as one run of `target`.
void write_process(const gssr::Process& p, RunTarget& target) {
  const RunInfo info = run_info(p);
  std::map<std::string, unsigned> index_of;
  auto writer = target.add_run(info, devices_of(p, index_of));
  const auto interval_ns = static_cast<double>(info.sampling_interval_ns);
  std::int64_t samples = 0;
  std::size_t longest = 0;
  ValueScreen screen;
  for (const auto& gpu : p.gpus) {
    std::size_t n = 0;
    for (const auto& series : gpu.values) n = std::max(n, series.size());
    longest = std::max(longest, n);
    for (std::size_t k = 0; k < n; ++k) {
      SampleRow row;
      row.device_index = index_of[gpu.gpu_id];
      row.mono_ns = std::llround(static_cast<double>(k) * interval_ns);
      row.wall_ns = info.start_wall_ns + row.mono_ns;
      for (std::size_t m = 0; m < gssr::kMetricCount; ++m) {
        const dcgm::FieldMapping* to = dcgm::field_mapping(gssr::kMetricFields[m]);
        const auto& series = gpu.values[m];
        if (to != nullptr && k < series.size() && std::isfinite(series[k])) {
          row.set(to->metric, series[k] * to->scale);
        }
      }
      screen.screen(row);
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
  for (auto& said : screen.said(info.label + ": ")) {
    target.notes().push_back(said);
    end.problems.push_back(std::move(said));
  }
  target.finish_run(*writer, end, p.gpus.size());
}

// Every process of `inputs`, each input read once; throws for an input that is not gssr data.
std::vector<gssr::Process> read_processes(const std::vector<fs::path>& inputs,
                                          std::vector<std::string>& notes) {
  std::vector<gssr::Process> processes;
  // One input named twice (two spellings, a link) is read once, as analyze does with files.
  for (const auto& input : each_file_once(inputs, notes)) {
    if (gssr::is_export(input)) {
      auto read = gssr::read_export(input, notes);
      processes.insert(processes.end(), std::make_move_iterator(read.begin()),
                       std::make_move_iterator(read.end()));
    } else {
      auto read = gssr::read_profile(input);
      notes.insert(notes.end(), read.notes.begin(), read.notes.end());
      processes.insert(processes.end(), std::make_move_iterator(read.processes.begin()),
                       std::make_move_iterator(read.processes.end()));
    }
  }
  return processes;
}

// The same process from two inputs (a folder and its export): counting it twice would double
// the job. Said here, naming the inputs, rather than by merge naming temporary files.
void refuse_repeated_processes(const std::vector<gssr::Process>& processes) {
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
}

}  // namespace

std::string_view GssrFormat::inputs() const {
  return "gssr profile folders (profile_out_JobID_<job>), process files (*_proc_<p>.json) or "
         "the SQLite gssr analyze --export wrote";
}

bool GssrFormat::recognises(const fs::path& path, const ReadOptions&) const {
  return gssr::is_profile_input(path) || gssr::is_export(path);
}

void GssrFormat::read(const std::vector<fs::path>& inputs, const ReadOptions&,
                      RunTarget& target) const {
  const std::vector<gssr::Process> processes = read_processes(inputs, target.notes());
  if (processes.empty()) {
    throw Error::usage("the gssr input holds no process with samples", {},
                       "check the folder or file given");
  }
  refuse_repeated_processes(processes);
  for (const auto& p : processes) write_process(p, target);
}

}  // namespace gpuscope::ingest
