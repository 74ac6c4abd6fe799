#include "app/analysis_loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "analyze/analyzer.hpp"
#include "analyze/carbon.hpp"
#include "app/analysis_extras.hpp"
#include "app/analysis_passes.hpp"
#include "app/analysis_sources.hpp"
#include "app/node_analysis.hpp"
#include "carbon/grid_source.hpp"
#include "carbon/series_file.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "ingest/import.hpp"
#include "store/grid_tables.hpp"
#include "util/environment.hpp"

namespace gpuscope::app {
namespace {

namespace fs = std::filesystem;

// --carbon-url, else GPUSCOPE_CARBON_URL, else "" (the source's own).
std::string carbon_url(const AnalyzeOptions& o) {
  if (o.carbon_url) return *o.carbon_url;
  return util::environment_or_empty("GPUSCOPE_CARBON_URL");
}

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

analyze::Analysis load_analysis(const AnalyzeOptions& o, const LoadExtras& extras) {
  check_options(o);
  analyze::AnalysisOptions options = analysis_options(o, extras);
  const auto grid = grid_request(o);
  AnalysisSources in = open_sources(input_files(o.inputs));
  if (!o.work_regex.empty()) options.work_units = work_from_output(in.sources, o.work_regex);
  std::vector<std::string> carbon_notes;
  if (grid) options.grid_series = grid_series_for_runs(*grid, in, carbon_notes);

  analyze::Analyzer analyzer(options, in.metas);
  // The clocks' places on the axis are known once the analyzer has every run.
  for (auto& source : in.sources) {
    source.clock.offset_s = analyzer.t0_offset_s(in.metas[source.meta]);
  }
  const auto jobs = device_jobs(in.sources);
  feed_activity(analyzer, in, jobs);
  analyzer.finish_activity();
  feed_phases(analyzer, in.sources);
  feed_devices(analyzer, in, jobs);
  feed_events(analyzer, in);

  analyze::Analysis analysis = analyzer.finish();
  analysis.inputs = in.input_names;
  if (extras.marks) analysis.marks = read_marks(in, extras);
  read_processes(analysis, in);
  add_node_energy(analysis, in, options);
  analysis.notes.insert(analysis.notes.end(), carbon_notes.begin(), carbon_notes.end());
  const auto saturation = saturation_notes(analysis);
  analysis.notes.insert(analysis.notes.end(), saturation.begin(), saturation.end());
  return analysis;
}

void print_carbon_regions(const AnalyzeOptions& o) {
  fmt::print("{}", carbon::uk_region_list(carbon_url(o)));
}

}  // namespace gpuscope::app
