// `gpuscope analyze`: what the numbers of one or more run databases mean, printed as text, JSON
// or CSV, and optionally gssr's static plots (-pts, -plb).
#include <memory>

#include "app/analysis_loader.hpp"
#include "app/gssr_import.hpp"
#include "cli/analysis_options.hpp"
#include "cli/command.hpp"
#include "cli/number_option.hpp"
#include "core/error.hpp"
#include "report/analysis_view.hpp"

namespace gpuscope::cli {
namespace {

struct AnalyzeCommandOptions {
  app::AnalyzeOptions analyze;
  bool plot_time_series = false;
  bool plot_load_balancing = false;
  std::string plot_prefix;
  app::PlotRequest plots;
};

int run_analyze_command(AnalyzeCommandOptions& o) {
  const app::AnalyzeOptions& a = o.analyze;
  if (a.json && a.csv) throw Error::usage("--json and --csv cannot be combined");
  // Bad names fail before the (possibly long) reading, and so do plot files that exist.
  report::parse_view(a.aggregate);
  report::parse_metrics(a.metrics);
  const bool plotting = o.plot_time_series || o.plot_load_balancing;
  if (plotting) {
    if (o.plot_time_series) o.plots.kinds.push_back(report::plots::PlotKind::TimeSeries);
    if (o.plot_load_balancing) o.plots.kinds.push_back(report::plots::PlotKind::LoadBalance);
    o.plots.prefix = !o.plot_prefix.empty() ? std::filesystem::path(o.plot_prefix)
                     : a.inputs.empty()     ? std::filesystem::path("gpuscope")
                                            : app::default_plot_prefix(a.inputs.front());
    o.plots.rename_hint = "--plot-prefix";
    o.plots.inputs = app::named_input_files(a.inputs);
    app::check_plot_outputs(o.plots);
  } else if (!o.plot_prefix.empty()) {
    throw Error::usage("--plot-prefix without a plot", {},
                       "add --plot-time-series (-pts) and/or --plot-load-balancing (-plb)");
  }
  if (a.carbon_region == "list") {
    app::print_carbon_regions(a);
    return 0;
  }
  // gssr's folders and exports are read through a temporary run database (docs/gssr.md).
  const app::ResolvedInputs resolved(o.analyze.inputs);
  o.analyze.inputs = resolved.paths();
  const analyze::Analysis analysis = app::load_analysis(a);
  app::print_analysis(analysis, a);
  if (plotting) app::write_requested_plots(analysis, o.plots);
  return 0;
}

}  // namespace

Command add_analyze_command(CLI::App& parent) {
  auto o = std::make_shared<AnalyzeCommandOptions>();
  CLI::App* app = parent.add_subcommand(
      "analyze",
      "Summarise runs: aggregations, idle trimming, efficiency score, load balance, "
      "energy, carbon and a diagnosis");
  add_analysis_options(*app, o->analyze);
  app->add_option(
         "-a,--aggregate", o->analyze.aggregate,
         "What to show: summary (default: over both GPUs and time, per-GPU activity, "
         "energy, diagnosis), time (per GPU), space (time series across GPUs), all, carbon "
         "(per grid intensity period, with --carbon-series or --carbon-source)")
      ->type_name("VIEW");
  app->add_option("--metric", o->analyze.metrics,
                  "Metrics for the time and space views (default: a useful few; 'all' for every "
                  "one); names as in docs/database.md")
      ->type_name("NAME");
  add_number_option(*app, "--resolution", o->analyze.resolution_s, {0.001, 31'536'000, "s"},
                    "Grid of the space view in seconds (default: the sampling interval, at most "
                    "2000 points)")
      ->type_name("SECONDS");
  app->add_flag("--json", o->analyze.json, "Print JSON (shape in docs/analysis.md)");
  app->add_flag("--csv", o->analyze.csv, "Print the chosen view as CSV");
  app->add_flag("--no-color", o->analyze.no_color, "No colour even on a terminal");
  app->add_flag("--plot-time-series", o->plot_time_series,
                "Also draw the time-series plot (-pts as in gssr): PREFIX-timeseries.png");
  app->add_flag("--plot-load-balancing", o->plot_load_balancing,
                "Also draw the load-balance plot (-plb as in gssr): PREFIX-load-balance.png");
  app->add_option("--plot-prefix", o->plot_prefix,
                  "Where the plots go: PREFIX-timeseries.png etc. (default: the first input "
                  "without its extension, e.g. run for run.db)")
      ->type_name("PREFIX");
  app->add_option("--plot-format", o->plots.format, "png (default), svg or pdf (one document)")
      ->type_name("FORMAT");
  app->add_option("--plot-size", o->plots.size, "Plot size in pixels (default 1600x1000)")
      ->type_name("WxH");
  app->add_flag("-f,--force-overwrite", o->plots.force, "Overwrite plot files that exist");
  return {app, [o] { return run_analyze_command(*o); }};
}

}  // namespace gpuscope::cli
