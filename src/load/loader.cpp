#include "load/loader.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <memory>

#include "analyze/analyzer.hpp"
#include "analyze/carbon.hpp"
#include "carbon/grid_source.hpp"
#include "carbon/series_file.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "ingest/import.hpp"
#include "load/extras.hpp"
#include "load/node_energy.hpp"
#include "load/partial.hpp"
#include "load/passes.hpp"
#include "load/sources.hpp"
#include "store/grid_tables.hpp"
#include "util/environment.hpp"

namespace gpuscope::load {

std::string carbon_url(const AnalyzeOptions& o) {
  if (o.carbon_url) return *o.carbon_url;
  return util::environment_or_empty("GPUSCOPE_CARBON_URL");
}

namespace {

namespace fs = std::filesystem;

// The options that need no file: checked before anything is read. Throws Error::usage.
void check_options(const AnalyzeOptions& o) {
  if (o.carbon_intensity && o.region) {
    throw Error::usage("--carbon-intensity and --region cannot be combined", {},
                       "--carbon-intensity overrides any region; give one of them");
  }
  if (o.region && !analyze::find_region(*o.region)) {
    std::string codes;
    for (const auto& r : analyze::builtin_regions()) {
      codes += (codes.empty() ? "" : ", ") + std::string(r.code);
    }
    throw Error::usage(fmt::format("unknown region '{}'", *o.region), {},
                       fmt::format("use one of {} or --carbon-intensity G", codes));
  }
  if (o.pue < 1.0) throw Error::usage("--pue must be at least 1");
  if (o.carbon_intensity && *o.carbon_intensity < 0) {
    throw Error::usage("--carbon-intensity must not be negative");
  }
  if (!o.work_regex.empty() && o.work_units) {
    throw Error::usage("--work-regex and --work-units cannot be combined");
  }
}

analyze::AnalysisOptions analysis_options(const AnalyzeOptions& o, const LoadExtras& extras) {
  analyze::AnalysisOptions options;
  options.trim = analyze::parse_trim_mode(o.trim);
  options.resolution_s = o.resolution_s;
  options.straggler_threshold = o.straggler_threshold;
  options.carbon_g_per_kwh = o.carbon_intensity;
  options.region = o.region;
  if (o.carbon_series) {
    options.grid_series = carbon::read_series_file(*o.carbon_series);
    if (o.region) options.grid_series->region = *o.region;
  }
  options.pue = o.pue;
  options.work_units = o.work_units;
  options.work_name = o.work_name;
  options.gpu_grid_metrics = extras.gpu_grid_metrics;
  options.gpu_grid_bins = extras.gpu_grid_bins;
  return options;
}

// The grid series a run database keeps (store/grid_tables), for carbon::grid_series.
class RunDatabaseGridCache final : public carbon::GridCache {
 public:
  explicit RunDatabaseGridCache(fs::path file) : file_(std::move(file)) {}
  std::optional<IntensitySeries> load(const std::string& key) override {
    return store::load_grid_series(file_, key);
  }
  void save(const std::string& key, const IntensitySeries& series,
            std::int64_t fetched_wall_ns) override {
    store::save_grid_series(file_, key, series, fetched_wall_ns);
  }
  std::string where() const override { return file_.string(); }

 private:
  fs::path file_;
};

// The grid's intensity over the runs' span from --carbon-source, kept in the first input
// (reproducible, offline).
std::optional<IntensitySeries> grid_series_for_runs(const carbon::GridRequest& request,
                                                    const AnalysisSources& in,
                                                    std::vector<std::string>& notes) {
  if (in.metas.empty() || in.input_names.empty()) return std::nullopt;
  std::int64_t start = std::numeric_limits<std::int64_t>::max(), end = 0;
  for (const auto& m : in.metas) {
    start = std::min(start, m.start_wall_ns);
    end = std::max(end, m.end_wall_ns > 0 ? m.end_wall_ns : wall_now_ns());
  }
  RunDatabaseGridCache cache(in.input_names.front());
  return carbon::grid_series(request, start, end, cache, notes);
}

std::optional<carbon::GridRequest> grid_request(const AnalyzeOptions& o) {
  if (!o.carbon_source) return std::nullopt;
  carbon::GridOptions options;
  options.source = *o.carbon_source;
  options.region = o.carbon_region;
  options.token_file = o.carbon_token_file;
  options.base_url = carbon_url(o);
  options.refetch = o.carbon_refetch;
  options.with_series_file = o.carbon_series.has_value();
  options.with_intensity = o.carbon_intensity.has_value();
  return carbon::grid_request(options, util::environment_or_empty("ELECTRICITYMAPS_TOKEN"));
}

// The run databases named, each file once (said on stderr when one was named twice).
std::vector<fs::path> input_files(const std::vector<std::string>& inputs) {
  if (inputs.empty()) {
    throw Error::usage("no run database to analyze", {},
                       "give one or more: gpuscope analyze run.db (or a directory of them)");
  }
  std::vector<std::string> notes;
  auto files = ingest::expand_run_databases(inputs, notes);
  for (const auto& note : notes) fmt::print(stderr, "gpuscope: note: {}\n", note);
  return files;
}

}  // namespace

namespace {

// The analyzer of `in` with every run's clock placed on its time axis.
std::unique_ptr<analyze::Analyzer> make_analyzer(const analyze::AnalysisOptions& options,
                                                 AnalysisSources& in) {
  auto analyzer = std::make_unique<analyze::Analyzer>(options, in.metas);
  for (auto& source : in.sources) {
    source.clock.offset_s = analyzer->t0_offset_s(in.metas[source.meta]);
  }
  return analyzer;
}

// After pass 2: each run's events, health, processes and node energy (run_extras.hpp), fed in
// run order. Most were read by pass 2's workers (`read`, by Source::index); a file is reopened
// only for a run they did not read, or for the report's marks.
analyze::Analysis finish_analysis(analyze::Analyzer& analyzer, const AnalysisSources& in,
                                  const analyze::AnalysisOptions& options, const LoadExtras& extras,
                                  const std::vector<std::string>& carbon_notes,
                                  SourceExtras& read) {
  std::vector<analyze::ProcessUse> processes;
  analyze::NodeEnergyInput node;
  Marks marks;
  for (const auto& source : in.sources) {
    std::optional<RunExtras> run;
    if (source.index < read.size()) run = std::move(read[source.index]);
    if (!run || extras.marks) {
      const store::RunReader::ReadTransaction transaction(source.reader());
      if (!run) run = read_extras(source.reader(), in, source);
      if (extras.marks) gather_marks(in, source, extras, marks);
    }
    feed_extras(analyzer, in, source, std::move(*run), processes, node);
  }
  analyze::Analysis analysis = analyzer.finish();
  analysis.inputs = in.input_names;
  if (extras.marks) analysis.marks = sorted_marks(std::move(marks));
  add_processes(analysis, std::move(processes));
  add_node_energy(analysis, std::move(node), options);
  analysis.notes.insert(analysis.notes.end(), carbon_notes.begin(), carbon_notes.end());
  const auto saturation = saturation_notes(analysis);
  analysis.notes.insert(analysis.notes.end(), saturation.begin(), saturation.end());
  return analysis;
}

}  // namespace

analyze::Analysis load_analysis(const AnalyzeOptions& o, const LoadExtras& extras) {
  check_options(o);
  analyze::AnalysisOptions options = analysis_options(o, extras);
  const auto grid = grid_request(o);
  AnalysisSources in = open_sources(input_files(o.inputs));
  if (!o.work_regex.empty()) options.work_units = work_from_output(in.sources, o.work_regex);
  std::vector<std::string> carbon_notes;
  if (grid) options.grid_series = grid_series_for_runs(*grid, in, carbon_notes);

  const auto analyzer = make_analyzer(options, in);
  const auto jobs = device_jobs(in.sources);
  SourcePhases phases;
  const auto checks = feed_activity(*analyzer, in, jobs, &phases);
  report_time_checks(*analyzer, in.sources, in.metas, checks);
  analyzer->finish_activity();
  feed_phases(*analyzer, in.sources, &phases);
  SourceExtras read;
  feed_devices(
      *analyzer, in, jobs,
      [&](analyze::PreparedDevice&& d) { analyzer->add_prepared(std::move(d)); }, &read);
  return finish_analysis(*analyzer, in, options, extras, carbon_notes, read);
}

namespace {

// What changes a distributed task's part, as text for the fingerprint every task must share.
std::string options_text(const AnalyzeOptions& o, const LoadExtras& extras) {
  std::string grid;
  for (const Metric m : extras.gpu_grid_metrics) grid += fmt::format("{},", static_cast<int>(m));
  return fmt::format(
      "trim={} resolution={:a} grid={}/{} intensity={} region={} series={} source={}/{} pue={:a}",
      o.trim, o.resolution_s, grid, extras.gpu_grid_bins,
      o.carbon_intensity ? fmt::format("{:a}", *o.carbon_intensity) : "-", o.region.value_or("-"),
      o.carbon_series.value_or("-"), o.carbon_source.value_or("-"), o.carbon_region, o.pue);
}

// Task 0 finds the grid's intensity (a grid API is asked once, its answer kept in the first
// input as always) and the work units; the others take the series from its context file.
std::vector<std::string> task_context(const AnalyzeOptions& o, analyze::AnalysisOptions& options,
                                      const AnalysisSources& in, const PartialDirectory& dir,
                                      PartialTask task) {
  std::vector<std::string> carbon_notes;
  if (task.index != 0) {
    if (auto grid = dir.read_context()) options.grid_series = std::move(grid);
    return carbon_notes;
  }
  if (!o.work_regex.empty()) options.work_units = work_from_output(in.sources, o.work_regex);
  if (const auto grid = grid_request(o)) {
    options.grid_series = grid_series_for_runs(*grid, in, carbon_notes);
  }
  dir.write_context(options.grid_series);
  return carbon_notes;
}

std::optional<analyze::Analysis> run_task(const AnalyzeOptions& o, const LoadExtras& extras,
                                          const std::vector<std::filesystem::path>& files,
                                          PartialTask task, PartialDirectory& dir) {
  analyze::AnalysisOptions options = analysis_options(o, extras);
  AnalysisSources in = open_sources(files, task_files(files.size(), task));
  const auto carbon_notes = task_context(o, options, in, dir, task);
  const auto analyzer = make_analyzer(options, in);
  const auto jobs = device_jobs(in.sources);  // this task's GPUs only

  // Pass 1: this task's share, then every other task's, exactly: the same window everywhere.
  SourcePhases phases;
  std::vector<TimeCheck> checks = feed_activity(*analyzer, in, jobs, &phases);
  ActivityShare mine{analyzer->activity_part(), {}};
  for (std::size_t i = 0; i < checks.size(); ++i) {
    if (checks[i].rows > 0) mine.checks.emplace_back(i, checks[i]);
  }
  dir.write_activity(mine);
  dir.read_activities([&](ActivityShare&& share) {
    analyzer->add_activity_part(share.activity);
    for (const auto& [source, check] : share.checks) {
      if (source >= checks.size()) throw Error("a partial summary names a run that is not here");
      checks[source].merge(check);
    }
  });
  report_time_checks(*analyzer, in.sources, in.metas, checks);
  analyzer->finish_activity();
  feed_phases(*analyzer, in.sources, &phases);

  // Pass 2: this task's GPUs into its part; task 0 then adds every part in GPU order.
  SourceExtras read;
  feed_devices(
      *analyzer, in, jobs,
      [&](analyze::PreparedDevice&& d) {
        const auto source = static_cast<std::size_t>(d.report.key.run_id);
        dir.add_device({source, d.report.key.device_index, std::move(d)});
      },
      task.index == 0 ? &read : nullptr);
  dir.finish_part();
  if (task.index != 0) return std::nullopt;
  std::size_t gpus = 0;
  dir.read_parts(
      [&](DeviceShare&& share) {
        ++gpus;
        if (share.source >= in.sources.size()) {
          throw Error("a partial summary names a run that is not here");
        }
        share.prepared.report.key =
            key_of(in.sources[share.source], in.metas[share.source], share.device);
        analyzer->add_prepared(std::move(share.prepared));
      },
      [&](analyze::OverallCounts&& counts) { analyzer->add_overall_counts(counts); });
  if (gpus == 0) {
    throw Error(fmt::format("no samples to analyze in {}", fmt::join(in.input_names, ", ")),
                "the job ended before the first sample, or no GPU was selected",
                "profile a longer job, or check gpuscope devices");
  }
  return finish_analysis(*analyzer, in, options, extras, carbon_notes, read);
}

}  // namespace

std::optional<analyze::Analysis> load_analysis_task(const AnalyzeOptions& o,
                                                    const LoadExtras& extras) {
  check_options(o);
  const PartialTask task = partial_task(o.task);
  const auto files = input_files(o.inputs);
  PartialDirectory dir(*o.partial_dir, task,
                       partial_fingerprint(files, task, options_text(o, extras)),
                       o.partial_timeout_s);
  try {
    return run_task(o, extras, files, task, dir);
  } catch (const std::exception& e) {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    dir.fail(fmt::format("on {}: {}", host, e.what()));
    throw;
  }
}

}  // namespace gpuscope::load
