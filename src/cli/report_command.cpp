// `gpuscope report`: one self-contained HTML file from one or more run databases.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "cli/analyze_run.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "report/html_report.hpp"

namespace gpuscope::cli {
namespace {

struct ReportOptions {
  AnalyzeOptions analyze;
  std::string output;
  std::string title;
  bool force = false;
};

// Writes beside the target and renames, so a failed write never leaves half a report.
void write_file(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) {
      const int error = errno;
      std::filesystem::remove(temporary);
      throw Error(fmt::format("cannot write {}", path.string()), std::strerror(error),
                  "check the directory exists and is writable");
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary);
    throw Error(fmt::format("cannot write {}", path.string()), error.message(),
                "check the directory exists and is writable");
  }
}

int run_report(const ReportOptions& o) {
  if (o.output.empty()) {
    throw Error::usage("no output file", {}, "name one: gpuscope report run.db -o report.html");
  }
  std::error_code error;
  if (std::filesystem::exists(o.output, error) && !o.force) {
    throw Error::usage(fmt::format("{} already exists", o.output), {},
                       "pass -f to overwrite it, or choose another name with -o");
  }
  if (std::filesystem::is_directory(o.output, error)) {
    throw Error::usage(fmt::format("{} is a directory", o.output), {}, "name a file with -o");
  }
  LoadExtras extras;
  extras.gpu_grid_metrics = report::html_report_grid_metrics();
  extras.marks = true;
  const analyze::Analysis analysis = load_analysis(o.analyze, extras);

  report::HtmlReportOptions options;
  options.title = o.title;
  options.generator = fmt::format("gpuscope {}", kVersion);
  if (*kGitRevision != '\0') options.generator += fmt::format(" ({})", kGitRevision);
  const std::string html = report::html_report(analysis, options);
  write_file(o.output, html);
  fmt::print(stderr, "gpuscope: wrote {} ({:.1f} MB, {} GPUs)\n", o.output,
             static_cast<double>(html.size()) / 1e6, analysis.gpus.size());
  return 0;
}

}  // namespace

Command add_report_command(CLI::App& parent) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* app = parent.add_subcommand(
      "report",
      "Write a self-contained HTML report: summary, diagnosis, timelines, heatmap, load balance, "
      "energy and carbon");
  app->add_option("inputs", o->analyze.inputs,
                  "Run databases, merged databases or directories of them")
      ->type_name("INPUT...");
  app->add_option("-i,--input", o->analyze.inputs, "Same as a positional INPUT (repeatable)")
      ->type_name("INPUT");
  app->add_option("-o,--output", o->output, "The HTML file to write (required)")->type_name("FILE");
  app->add_flag("-f,--force", o->force, "Overwrite the output file if it exists");
  app->add_option("--title", o->title, "Title of the report (default: the GPU count)")
      ->type_name("TEXT");
  app->add_option("-d,--detect-outliers", o->analyze.trim,
                  "Leave idle edges out of the statistics: leading (default), trailing, all, none")
      ->type_name("MODE");
  app->add_option("--carbon-intensity", o->analyze.carbon_intensity,
                  "Grid carbon intensity in gCO2e/kWh (default: --region's yearly average, else "
                  "the world average)")
      ->type_name("G");
  app->add_option("--region", o->analyze.region,
                  "Grid region for the carbon intensity (FR, US, DE, GB, ...; see "
                  "docs/analysis.md)")
      ->type_name("CODE");
  app->add_option("--pue", o->analyze.pue,
                  "Facility power usage effectiveness (default 1: GPUs only)")
      ->type_name("X");
  app->add_option("--work-regex", o->analyze.work_regex,
                  "Regex over the captured output whose first group is an amount of work done "
                  "(summed); needs --capture-output at profile time")
      ->type_name("REGEX");
  app->add_option("--work-units", o->analyze.work_units,
                  "Total work the job did (e.g. tokens, images)")
      ->type_name("N");
  app->add_option("--work-name", o->analyze.work_name, "Name of a unit of work (default 'units')")
      ->type_name("NAME");
  app->add_option("--straggler-threshold", o->analyze.straggler_threshold,
                  "How far below the median a GPU must be to be called a straggler (default 0.15)")
      ->type_name("FRACTION");
  return {app, [o] { return run_report(*o); }};
}

}  // namespace gpuscope::cli
