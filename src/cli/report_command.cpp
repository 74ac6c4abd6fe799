// `gpuscope report`: one self-contained HTML file from one or more run databases, or the static
// plots (PNG, SVG, PDF).
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "app/analysis_loader.hpp"
#include "app/gssr_import.hpp"
#include "app/report_kernels.hpp"
#include "app/report_sweep.hpp"
#include "cli/analysis_options.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/output_file.hpp"
#include "core/version.hpp"
#include "report/html_report.hpp"

namespace gpuscope::cli {
namespace {

struct ReportOptions {
  app::AnalyzeOptions analyze;
  std::string output;
  std::string title;
  std::string format;  // html, png, svg, pdf; empty: from the output's extension, else html
  app::PlotRequest plots;
};

// The format asked for, or the one the output's extension names (report.pdf → pdf), else html.
std::string format_of(const ReportOptions& o) {
  if (!o.format.empty()) {
    for (const char* known : {"html", "png", "svg", "pdf"}) {
      if (o.format == known) return o.format;
    }
    throw Error::usage(fmt::format("unknown report format '{}'", o.format), {},
                       "use html, png, svg or pdf");
  }
  const std::string extension = std::filesystem::path(o.output).extension().string();
  for (const char* known : {"png", "svg", "pdf"}) {
    if (extension == std::string(".") + known) return known;
  }
  return "html";
}

// Static plots: -o names a prefix (plots/run → plots/run-timeseries.png ...); an extension of
// the format's own is dropped (run.png → run-...png, run.pdf → run.pdf).
int run_plots(const ReportOptions& o, const std::string& format) {
  app::PlotRequest request = o.plots;
  request.format = format;
  std::filesystem::path prefix(o.output);
  if (prefix.extension() == "." + format) prefix.replace_extension();
  request.prefix = prefix;
  request.inputs = app::named_input_files(o.analyze.inputs);
  app::check_plot_outputs(request);
  const auto options = app::plot_options(request);
  app::LoadExtras extras;
  extras.gpu_grid_metrics = report::plots::grid_metrics_for_plots(options);
  const app::ResolvedInputs resolved(o.analyze.inputs);  // gssr data: docs/gssr.md
  app::AnalyzeOptions analyze = o.analyze;
  analyze.inputs = resolved.paths();
  const analyze::Analysis analysis = app::load_analysis(analyze, extras);
  app::write_requested_plots(analysis, request);
  return 0;
}

int run_report(const ReportOptions& o) {
  if (o.output.empty()) {
    throw Error::usage("no output file", {}, "name one: gpuscope report run.db -o report.html");
  }
  const std::string format = format_of(o);
  if (format != "html") return run_plots(o, format);
  if (!o.plots.size.empty() || !o.plots.heatmap_metric.empty()) {
    throw Error::usage("--size and --heatmap-metric are for the static plots", {},
                       "add --format png, svg or pdf, or leave them out for HTML");
  }
  OutputCheck check;
  check.force = o.plots.force;
  check.stdout_allowed = true;
  check.inputs = app::named_input_files(o.analyze.inputs);
  const std::filesystem::path output = check_output_file(o.output, check);
  app::LoadExtras extras;
  extras.gpu_grid_metrics = report::html_report_grid_metrics();
  extras.marks = true;
  const app::ResolvedInputs resolved(o.analyze.inputs);  // gssr data: docs/gssr.md
  app::AnalyzeOptions analyze = o.analyze;
  analyze.inputs = resolved.paths();
  const analyze::Analysis analysis = app::load_analysis(analyze, extras);

  report::HtmlReportOptions options;
  options.title = o.title;
  options.generator = fmt::format("gpuscope {}", kVersion);
  options.kernels = app::load_kernel_lanes(analysis);          // profile --trace-kernels
  options.sections_html = app::sweep_sections_html(analysis);  // a sweep database's sweep
  if (*kGitRevision != '\0') options.generator += fmt::format(" ({})", kGitRevision);
  const std::string html = report::html_report(analysis, options);
  write_output_file(output, html);
  fmt::print(stderr, "gpuscope: wrote {} ({:.1f} MB, {} GPUs)\n",
             output == "-" ? std::string("the report to standard output") : output.string(),
             static_cast<double>(html.size()) / 1e6, analysis.gpus.size());
  return 0;
}

}  // namespace

Command add_report_command(CLI::App& parent) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* app = parent.add_subcommand(
      "report",
      "Write a self-contained HTML report (summary, diagnosis, timelines, heatmap, load balance, "
      "energy and carbon) or static PNG/SVG/PDF plots");
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
  return {app, [o] { return run_report(*o); }};
}

}  // namespace gpuscope::cli
