// `gpuscope report`: one self-contained HTML file from one or more run databases, or the static
// plots (PNG, SVG, PDF). The work is app::run_report.
#include <memory>

#include "app/inputs/analyze_run.hpp"
#include "cli/analysis_options.hpp"
#include "cli/command.hpp"

namespace gpuscope::cli {

Command add_report_command(CLI::App& parent) {
  auto o = std::make_shared<app::ReportRun>();
  CLI::App* app = parent.add_subcommand(
      "report",
      "Write a self-contained HTML report (summary, diagnosis, timelines, heatmap, load balance, "
      "energy and carbon) or static PNG/SVG/PDF plots");
  add_input_options(*app, o->analyze);
  add_analysis_options(*app, o->analyze);
  app->add_option("-o,--output", o->output,
                  "The HTML file to write (required); for --format png or svg a prefix: "
                  "PREFIX-timeseries.png, -load-balance, -heatmap, -overview")
      ->type_name("FILE");
  app->add_option("--format", o->format,
                  "html (default), or static plots: png, svg, pdf (one document with every plot); "
                  "default from the output's extension")
      ->type_name("FORMAT");
  app->add_flag("-f,--force-overwrite,--force", o->plots.force,
                "Overwrite output files that exist");
  app->add_option("--title", o->title, "Title of the HTML report (default: the GPU count)")
      ->type_name("TEXT");
  app->add_option("--size", o->plots.size,
                  "Plot size in pixels, points for PDF (default 1600x1000)")
      ->type_name("WxH");
  app->add_option("--heatmap-metric", o->plots.heatmap_metric,
                  "Metric of the plotted heatmap (default sm_active_pct, else gpu_util_pct)")
      ->type_name("NAME");
  return {app, [o] { return app::run_report(*o); }};
}

}  // namespace gpuscope::cli
