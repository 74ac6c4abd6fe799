#include "app/inputs/analyze_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "app/inputs/report_kernels.hpp"
#include "app/inputs/report_sweep.hpp"
#include "carbon/grid_source.hpp"
#include "core/error.hpp"
#include "core/output_check.hpp"
#include "core/version.hpp"
#include "ingest/import.hpp"
#include "report/analysis_view.hpp"
#include "report/html_report.hpp"
#include "report/print.hpp"
#include "util/visible_text.hpp"

namespace gpuscope::app {
namespace {

// Foreign inputs imported (docs/gssr.md), with what the import left out said on stderr.
ingest::RunInputs resolve_inputs(load::AnalyzeOptions& o) {
  ingest::RunInputs resolved(o.inputs, o.read);
  for (const auto& note : resolved.notes()) {
    fmt::print(stderr, "gpuscope: note: {}\n", util::visible(note));  // quotes the inputs
  }
  if (o.partial_dir) {
    // Each task would convert the logs into its own temporary files: the tasks would not agree
    // on their inputs (nor should every node convert every log).
    for (const auto& path : resolved.paths()) {
      if (std::find(o.inputs.begin(), o.inputs.end(), path) != o.inputs.end()) continue;
      throw Error::usage("--partial reads run databases, and an input is a log", {},
                         "convert the logs once with gpuscope import LOG... -o runs.db, then "
                         "analyse the databases");
    }
  }
  o.inputs = resolved.paths();
  return resolved;
}

// The plots analyze draws (-pts, -plb), checked before the (possibly long) reading.
bool prepare_plots(AnalyzeRun& o) {
  const bool plotting = o.plot_time_series || o.plot_load_balancing;
  if (!plotting) {
    if (!o.plot_prefix.empty()) {
      throw Error::usage("--plot-prefix without a plot", {},
                         "add --plot-time-series (-pts) and/or --plot-load-balancing (-plb)");
    }
    return false;
  }
  if (o.plot_time_series) o.plots.kinds.push_back(report::plots::PlotKind::TimeSeries);
  if (o.plot_load_balancing) o.plots.kinds.push_back(report::plots::PlotKind::LoadBalance);
  const auto& inputs = o.analyze.inputs;
  o.plots.prefix = !o.plot_prefix.empty() ? std::filesystem::path(o.plot_prefix)
                   : inputs.empty()       ? std::filesystem::path("gpuscope")
                                          : default_plot_prefix(inputs.front());
  o.plots.rename_hint = "--plot-prefix";
  o.plots.inputs = ingest::named_input_files(inputs);
  check_plot_outputs(o.plots);
  return true;
}

// The format asked for, or the one the output's extension names (report.pdf → pdf), else html.
std::string report_format(const ReportRun& o) {
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

// The analysis, alone or as a task of a distributed one (nullopt: a task other than the first).
std::optional<analyze::Analysis> load_for_task(const load::AnalyzeOptions& o,
                                               const load::LoadExtras& extras = {}) {
  if (o.partial_dir) return load::load_analysis_task(o, extras);
  if (o.task) throw Error::usage("--task goes with --partial DIR");
  return load::load_analysis(o, extras);
}

// Static plots: -o names a prefix (plots/run → plots/run-timeseries.png ...); an extension of
// the format's own is dropped (run.png → run-...png, run.pdf → run.pdf).
int run_plots(const ReportRun& o, const std::string& format) {
  PlotRequest request = o.plots;
  request.format = format;
  std::filesystem::path prefix(o.output);
  if (prefix.extension() == "." + format) prefix.replace_extension();
  request.prefix = prefix;
  request.inputs = ingest::named_input_files(o.analyze.inputs);
  check_plot_outputs(request);
  const auto options = plot_options(request);
  load::LoadExtras extras;
  extras.gpu_grid_metrics = report::plots::grid_metrics_for_plots(options);
  load::AnalyzeOptions analyze = o.analyze;
  const auto resolved = resolve_inputs(analyze);
  const auto analysis = load_for_task(analyze, extras);
  if (analysis) write_requested_plots(*analysis, request);
  return 0;
}

// An imported input's own name where the analysis names the temporary database it became (gone
// when the command ends). After whatever reads those databases again (kernels, sweep sections).
void name_imported_inputs(analyze::Analysis& analysis, const ingest::RunInputs& resolved) {
  for (auto& input : analysis.inputs) input = resolved.shown_as(input);
  for (auto& run : analysis.runs) run.source = resolved.shown_as(run.source);
}

report::PrintOptions print_options(const load::AnalyzeOptions& o) {
  return {o.aggregate, o.metrics, o.json, o.csv, o.no_color};
}

}  // namespace

int run_analyze(AnalyzeRun o) {
  const load::AnalyzeOptions& a = o.analyze;
  if (a.json && a.csv) throw Error::usage("--json and --csv cannot be combined");
  // Bad names fail before the (possibly long) reading, and so do plot files that exist.
  report::parse_view(a.aggregate);
  report::parse_metrics(a.metrics);
  const bool plotting = prepare_plots(o);
  if (a.carbon_region == "list") {  // the UK regions, with the API's forecast when it answers
    fmt::print("{}", carbon::uk_region_list(load::carbon_url(a)));
    return 0;
  }
  const auto resolved = resolve_inputs(o.analyze);
  auto loaded = load_for_task(a);
  if (!loaded) return 0;  // a task of a distributed analysis other than the first
  name_imported_inputs(*loaded, resolved);
  const analyze::Analysis& analysis = *loaded;
  report::print_analysis(analysis, print_options(a));
  if (plotting) write_requested_plots(analysis, o.plots);
  return 0;
}

int run_report(const ReportRun& o) {
  if (o.output.empty()) {
    throw Error::usage("no output file", {}, "name one: gpuscope report run.db -o report.html");
  }
  const std::string format = report_format(o);
  if (format != "html") return run_plots(o, format);
  if (!o.plots.size.empty() || !o.plots.heatmap_metric.empty()) {
    throw Error::usage("--size and --heatmap-metric are for the static plots", {},
                       "add --format png, svg or pdf, or leave them out for HTML");
  }
  OutputCheck check;
  check.force = o.plots.force;
  check.stdout_allowed = true;
  check.inputs = ingest::named_input_files(o.analyze.inputs);
  const std::filesystem::path output = check_output_file(o.output, check);
  load::LoadExtras extras;
  extras.gpu_grid_metrics = report::html_report_grid_metrics();
  extras.marks = true;
  load::AnalyzeOptions analyze = o.analyze;
  const auto resolved = resolve_inputs(analyze);
  auto loaded = load_for_task(analyze, extras);
  if (!loaded) return 0;  // a task of a distributed analysis other than the first
  analyze::Analysis& analysis = *loaded;

  report::HtmlReportOptions options;
  options.title = o.title;
  options.generator = fmt::format("gpuscope {}", kVersion);
  options.kernels = load_kernel_lanes(analysis);          // profile --trace-kernels
  options.sections_html = sweep_sections_html(analysis);  // a sweep database's sweep
  name_imported_inputs(analysis, resolved);
  if (*kGitRevision != '\0') options.generator += fmt::format(" ({})", kGitRevision);
  const std::string html = report::html_report(analysis, options);
  write_output_file(output, html);
  fmt::print(stderr, "gpuscope: wrote {} ({:.1f} MB, {} GPU{})\n",
             output == "-" ? std::string("the report to standard output") : output.string(),
             static_cast<double>(html.size()) / 1e6, analysis.gpus.size(),
             analysis.gpus.size() == 1 ? "" : "s");
  return 0;
}

}  // namespace gpuscope::app
