#include "load/sources.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>
#include <thread>
#include <tuple>

#include "core/error.hpp"
#include "store/run_codec.hpp"
#include "util/command_line.hpp"
#include "util/ordered_parallel.hpp"

namespace gpuscope::load {
namespace {

namespace fs = std::filesystem;
using analyze::GpuKey;
using analyze::RunMeta;

// What makes two stored runs the same run: merge's key (same host, SLURM job, step, rank and
// start time; two logs' runs differ by their origin where all else is alike).
using RunIdentity = std::tuple<std::string, std::optional<std::string>, std::optional<std::string>,
                               std::optional<int>, std::int64_t, std::optional<std::string>>;

// The same run in two files (a rank's database and a merge that holds it) would be counted
// twice, doubling its energy: refused, as merge refuses it. `seen` maps each run to its file.
void refuse_duplicate_run(std::map<RunIdentity, std::string>& seen, const store::StoredRun& run,
                          const fs::path& path) {
  RunIdentity identity{run.info.host,       run.info.slurm.job_id,  run.info.slurm.step_id,
                       run.info.ranks.rank, run.info.start_wall_ns, run.info.origin};
  const auto [it, added] = seen.try_emplace(std::move(identity), path.string());
  if (added) return;
  const std::string& other = it->second;
  throw Error::usage(
      other == path.string() ? fmt::format("{} holds the same run twice", other)
                             : fmt::format("{} and {} hold the same run", other, path.string()),
      fmt::format("host {}, rank {}", run.info.host,
                  run.info.ranks.rank ? std::to_string(*run.info.ranks.rank) : std::string("-")),
      "name each run's database once (a merged database already holds its ranks)");
}

// Runs with the same host (else label) and rank would give their GPUs the same label, and
// whatever is matched by label (a GPU's health events) would mix: each is tagged with its file's
// name where those differ, else with its place among them ("run 2").
void tag_runs_of_one_place(std::vector<RunMeta>& metas) {
  std::map<std::pair<std::string, std::optional<int>>, std::vector<std::size_t>> places;
  for (std::size_t i = 0; i < metas.size(); ++i) {
    const RunMeta& m = metas[i];
    places[{m.host.empty() ? m.label : m.host, m.rank}].push_back(i);
  }
  for (const auto& [place, runs] : places) {
    if (runs.size() < 2) continue;
    std::set<std::string> names;
    for (std::size_t i : runs) names.insert(fs::path(metas[i].source).filename().string());
    for (std::size_t k = 0; k < runs.size(); ++k) {
      RunMeta& m = metas[runs[k]];
      m.tag = names.size() == runs.size() ? fs::path(m.source).filename().string()
                                          : fmt::format("run {}", k + 1);
    }
  }
}

RunMeta meta_of(const store::StoredRun& run, const fs::path& path) {
  RunMeta meta;
  meta.run_id = run.run_id;
  meta.source = path.string();
  meta.host = run.info.host;
  meta.rank = run.info.ranks.rank;
  meta.launcher = run.info.ranks.launcher;
  meta.job_id = run.info.ranks.job_id;
  meta.local_rank = run.info.ranks.local_rank;
  meta.world_size = run.info.ranks.world_size;
  meta.node_name = run.info.ranks.node_name;
  meta.pod_name = run.info.ranks.pod_name;
  meta.pod_namespace = run.info.ranks.pod_namespace;
  meta.label = run.info.label;
  meta.command_line = util::shell_command_line(run.info.command);
  meta.start_wall_ns = run.info.start_wall_ns;
  meta.end_wall_ns = run.end.end_wall_ns;
  meta.sampling_interval_s = static_cast<double>(run.info.sampling_interval_ns) / 1e9;
  meta.status = std::string(store::status_text(run.end.status));
  meta.exit_code = run.end.exit_code;
  meta.scenario = run.info.scenario;
  meta.origin = run.info.origin;
  meta.problems = run.end.problems;
  return meta;
}

}  // namespace

const store::RunReader& ReaderCache::get(const fs::path& path) {
  for (std::size_t i = open_.size(); i-- > 0;) {
    if (open_[i]->path() != path) continue;
    std::rotate(open_.begin() + static_cast<std::ptrdiff_t>(i),
                open_.begin() + static_cast<std::ptrdiff_t>(i) + 1, open_.end());
    return *open_.back();
  }
  if (open_.size() >= kOpen) open_.erase(open_.begin());
  open_.push_back(std::make_unique<store::RunReader>(store::RunReader::open(path)));
  return *open_.back();
}

namespace {

// What open_sources reads of one file: its runs and, per run, what a Source holds of it.
struct FileRuns {
  fs::path path;
  std::vector<store::StoredRun> runs;
  std::vector<Source> sources;  // one per run, without their places in the list
};

// `deep`: with each GPU's sample count and read plan (the samples index is read); else only the
// runs and their devices, for a distributed task that reads another task's file's samples never.
FileRuns read_file_runs(const fs::path& path, bool deep) {
  FileRuns out;
  const store::RunReader reader = store::RunReader::open(path);
  const store::RunReader::ReadTransaction transaction(reader);
  out.path = reader.path();
  out.runs = reader.runs();
  for (const auto& run : out.runs) {
    Source source;
    source.path = out.path;
    source.run_id = run.run_id;
    source.devices = reader.devices(run.run_id);
    if (deep) source.samples_by_device = reader.samples_per_device(run.run_id);
    for (const auto& [device, rows] : source.samples_by_device) source.samples += rows;
    for (const auto& d : source.devices) {
      if (!deep) break;
      std::int64_t rows = 0;
      for (const auto& [device, count] : source.samples_by_device) {
        if (device == d.index) rows = count;
      }
      source.plans.emplace_back(d.index, reader.sample_plan(run.run_id, d.index, true, rows));
    }
    source.clock.start_wall_ns = run.info.start_wall_ns;
    source.clock.start_mono_ns = run.info.start_mono_ns;
    if (run.end.status != RunStatus::Running && run.end.end_mono_ns >= run.info.start_mono_ns) {
      source.clock.end_mono_ns = run.end.end_mono_ns;
    }
    out.sources.push_back(std::move(source));
  }
  return out;
}

}  // namespace

AnalysisSources open_sources(const std::vector<fs::path>& paths, std::optional<FileRange> deep) {
  AnalysisSources out;
  std::map<RunIdentity, std::string> identities;
  const auto readers = std::make_shared<ReaderCache>();
  // Files are read on two threads (opening one parses its schema: thousands of rank files make
  // that most of the time) and listed here in their order.
  const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1U, 2U);
  util::ordered_parallel<FileRuns>(
      paths.size(), threads, 4 * threads,
      [&](std::size_t i, unsigned, FileRuns& file) {
        file = read_file_runs(paths[i], !deep || (i >= deep->first && i < deep->second));
      },
      [&](FileRuns& file) {
        out.input_names.push_back(file.path.string());
        for (std::size_t r = 0; r < file.runs.size(); ++r) {
          const store::StoredRun& run = file.runs[r];
          refuse_duplicate_run(identities, run, file.path);
          Source& source = file.sources[r];
          source.readers = readers;
          source.meta = out.metas.size();
          source.index = out.sources.size();
          out.samples += source.samples;
          out.sources.push_back(std::move(source));
          out.metas.push_back(meta_of(run, file.path));
        }
      });
  if (out.metas.empty()) {
    throw Error::usage("the input holds no run", {}, "is it a gpuscope run database?");
  }
  tag_runs_of_one_place(out.metas);
  if (out.samples == 0 && !deep) {
    throw Error(fmt::format("no samples to analyze in {}", fmt::join(out.input_names, ", ")),
                "the job ended before the first sample, or no GPU was selected",
                "profile a longer job, or check gpuscope devices");
  }
  return out;
}

GpuKey key_of(const Source& source, const RunMeta& meta, unsigned device_index) {
  GpuKey key;
  key.run_id = static_cast<std::int64_t>(source.meta);
  key.host = meta.host;
  key.run_label = meta.label;
  key.run_tag = meta.tag;
  key.rank = meta.rank;
  key.device_index = device_index;
  for (const auto& d : source.devices) {
    if (d.index != device_index) continue;
    key.uuid = d.uuid.value_or("");
    key.name = d.name.value_or("");
    key.vendor = d.vendor;
    key.saturation_source = d.saturation_source;
    key.saturation_detail = d.saturation_detail;
    key.mig = d.mig;
    key.mig_enabled = d.mig_enabled;
  }
  return key;
}

// Every (run, GPU) with samples, in the order a cursor over the run visits them; nullopt when the
// devices table does not account for every sample (then both passes read sequentially).
std::optional<std::vector<DeviceJob>> device_jobs(const std::vector<Source>& sources) {
  std::vector<DeviceJob> jobs;
  for (const auto& source : sources) {
    std::int64_t covered = 0;
    for (const auto& [device, plan] : source.plans) {
      if (plan.rows > 0) jobs.push_back({&source, device, plan});
      covered += plan.rows;
    }
    if (covered != source.samples) return std::nullopt;
  }
  return jobs;
}

}  // namespace gpuscope::load
