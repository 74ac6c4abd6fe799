// `gpuscope analyze`: what the numbers of one or more run databases mean.
#include <memory>

#include "cli/analyze_run.hpp"
#include "cli/command.hpp"

namespace gpuscope::cli {

Command add_analyze_command(CLI::App& parent) {
  auto o = std::make_shared<AnalyzeOptions>();
  CLI::App* app = parent.add_subcommand(
      "analyze",
      "Summarise runs: aggregations, idle trimming, efficiency score, load balance, "
      "energy, carbon and a diagnosis");
  app->add_option("inputs", o->inputs, "Run databases, merged databases or directories of them")
      ->type_name("INPUT...");
  app->add_option("-i,--input", o->inputs, "Same as a positional INPUT (repeatable)")
      ->type_name("INPUT");
  app->add_option("-d,--detect-outliers", o->trim,
                  "Leave idle edges out of the statistics: leading (default), trailing, all, none")
      ->type_name("MODE");
  app->add_option("-a,--aggregate", o->aggregate,
                  "What to show: summary (default: over both GPUs and time, per-GPU activity, "
                  "energy, diagnosis), time (per GPU), space (time series across GPUs), all")
      ->type_name("VIEW");
  app->add_option("--metric", o->metrics,
                  "Metrics for the time and space views (default: a useful few; 'all' for every "
                  "one); names as in docs/database.md")
      ->type_name("NAME");
  app->add_option("--resolution", o->resolution_s,
                  "Grid of the space view in seconds (default: the sampling interval, at most "
                  "2000 points)")
      ->type_name("SECONDS");
  app->add_flag("--json", o->json, "Print JSON (shape in docs/analysis.md)");
  app->add_flag("--csv", o->csv, "Print the chosen view as CSV");
  app->add_option("--carbon-intensity", o->carbon_intensity,
                  "Grid carbon intensity in gCO2e/kWh (default: --region's yearly average, else "
                  "the world average)")
      ->type_name("G");
  app->add_option("--region", o->region,
                  "Grid region for the carbon intensity (FR, US, DE, GB, "
                  "...; see docs/analysis.md)")
      ->type_name("CODE");
  app->add_option("--pue", o->pue, "Facility power usage effectiveness (default 1: GPUs only)")
      ->type_name("X");
  app->add_option("--work-regex", o->work_regex,
                  "Regex over the captured output whose first group is an amount of work done "
                  "(summed), e.g. 'processed ([0-9]+) tokens'; needs --capture-output at profile "
                  "time")
      ->type_name("REGEX");
  app->add_option("--work-units", o->work_units, "Total work the job did (e.g. tokens, images)")
      ->type_name("N");
  app->add_option("--work-name", o->work_name, "Name of a unit of work (default 'units')")
      ->type_name("NAME");
  app->add_option("--straggler-threshold", o->straggler_threshold,
                  "How far below the median a GPU must be to be called a straggler (default 0.15)")
      ->type_name("FRACTION");
  app->add_flag("--no-color", o->no_color, "No colour even on a terminal");
  return {app, [o] { return run_analyze(*o); }};
}

}  // namespace gpuscope::cli
