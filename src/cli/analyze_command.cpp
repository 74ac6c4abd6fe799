// `gpuscope analyze`: what the numbers of one or more run databases mean, printed as text, JSON
// or CSV, and optionally gssr's static plots (-pts, -plb). The work is app::run_analyze.
#include <memory>

#include "app/inputs/analyze_run.hpp"
#include "cli/analysis_options.hpp"
#include "cli/command.hpp"
#include "cli/number_option.hpp"

namespace gpuscope::cli {

Command add_analyze_command(CLI::App& parent) {
  auto o = std::make_shared<app::AnalyzeRun>();
  CLI::App* app = parent.add_subcommand(
      "analyze",
      "Summarise runs: aggregations, idle trimming, efficiency score, load balance, "
      "energy, carbon and a diagnosis");
  add_input_options(*app, o->analyze);
  add_analysis_options(*app, o->analyze);
  app->add_option(
         "-a,--aggregate", o->analyze.aggregate,
         "What to show: summary (default: over both GPUs and time, per-GPU activity, "
         "energy, diagnosis), time (per GPU), space (time series across GPUs), all, carbon "
         "(per grid intensity period, with --carbon-series or --carbon-source), node (the "
         "node's CPU and memory energy beside the GPUs')")
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
  return {app, [o] { return app::run_analyze(*o); }};
}

}  // namespace gpuscope::cli
