#include "app/help/command_docs.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <system_error>

#include "analyze/carbon.hpp"
#include "collect/backend.hpp"
#include "core/error.hpp"
#include "core/metrics.hpp"
#include "core/output_check.hpp"
#include "docgen/completion.hpp"
#include "ingest/format.hpp"

namespace gpuscope::app {
namespace {

std::vector<std::string> metric_names() {
  std::vector<std::string> names;
  for (const MetricInfo& metric : kMetrics) names.emplace_back(metric.name);
  return names;
}

std::string page_date(const std::string& given) {
  if (!given.empty()) return given;
  std::time_t now = std::time(nullptr);
  if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH"); epoch != nullptr && *epoch != '\0') {
    now = static_cast<std::time_t>(std::strtoll(epoch, nullptr, 10));
  }
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", &utc);
  return text;
}

// Troff for gpuscope(1) beyond the command list: exit status and environment (docs/cli.md).
constexpr const char* kTopSections = R"(.SH "EXIT STATUS"
.TP
\fB0\fR
success
.TP
\fB1\fR
the command could not do its work (no driver, NVML failure, unreadable input)
.TP
\fB2\fR
usage error: unknown option or command, missing or invalid argument, unknown scenario
.PP
\fBgpuscope profile\fR exits with the job's status instead.
Errors are one line on standard error: gpuscope: error: what (why); what to do.
.SH ENVIRONMENT
.TP
\fBGPUSCOPE_NVML_LIBRARY\fR, \fBGPUSCOPE_DCGM_LIBRARY\fR
load NVML or DCGM from this path (as \fB\-\-nvml\-library\fR, \fB\-\-dcgm\-library\fR)
.TP
\fBELECTRICITYMAPS_TOKEN\fR
the Electricity Maps token for \fB\-\-carbon\-source electricitymaps\fR
.SH FILES
.TP
\fI/usr/lib/gpuscope/\fR
private libraries: the simulated NVML and DCGM drivers behind \fB\-\-simulate\fR, the web
configuration reader of \fBserve \-\-web\-config\fR, the CUPTI injection library of
\fBprofile \-\-trace\-kernels\fR where it was built (under the installation prefix)
.TP
\fI/usr/share/gpuscope/scenarios/\fR
the shipped scenarios (\fBgpuscope scenarios\fR)
.TP
\fI/usr/share/gpuscope/grafana/\fR
a Grafana dashboard for \fBgpuscope serve\fR
)";

void write_man_pages(const docgen::CommandDoc& top, const HelpOptions& options,
                     const std::string& version) {
  const docgen::ManContext context{version, page_date(options.date), command_examples(),
                                   kTopSections};
  std::error_code error;
  std::filesystem::create_directories(options.man_dir, error);
  if (error) {
    throw Error::usage(fmt::format("cannot make the folder {}", options.man_dir), error.message(),
                       "give --man a folder you may write");
  }
  for (const docgen::ManPage& page : docgen::man_pages(top, context)) {
    write_output_file(std::filesystem::path(options.man_dir) / page.file_name, page.text);
  }
}

}  // namespace

docgen::ValueLists completion_values() {
  docgen::ValueLists values;
  for (const collect::ScenarioInfo& scenario : collect::shipped_scenarios()) {
    values["--simulate"].push_back(scenario.name);
  }
  std::vector<std::string> metrics = metric_names();
  values["--heatmap-metric"] = metrics;
  values["--metrics"] = metrics;
  metrics.emplace_back("all");
  values["--metric"] = metrics;
  for (const analyze::GridRegion& region : analyze::builtin_regions())
    values["--region"].emplace_back(region.code);
  for (const ingest::Format* format : ingest::formats()) {
    values["--input-format"].emplace_back(format->name());
  }
  // Checked by the workflows' parsers (analyze::parse_trim_mode, report::parse_view,
  // carbon::grid_request, report::plots::parse_plot_format, phases::mark_kind_from_text).
  values["--detect-outliers"] = {"leading", "trailing", "all", "none"};
  values["--aggregate"] = {"summary", "time", "space", "all", "carbon", "phases", "node"};
  values["--carbon-source"] = {"uk", "electricitymaps"};
  values["--format"] = {"html", "png", "svg", "pdf"};
  values["--plot-format"] = {"png", "svg", "pdf"};
  values["--dcgm"] = {"auto", "embedded", "hostengine"};
  values["kind"] = {"begin", "end", "point"};
  return values;
}

int run_help(const docgen::CommandDoc& top, const HelpOptions& options, const std::string& version,
             const std::string& help_text) {
  if (!options.man_dir.empty()) write_man_pages(top, options, version);
  if (options.completion == "bash") fmt::print("{}", docgen::bash_completion(top));
  if (options.completion == "zsh") fmt::print("{}", docgen::zsh_completion(top));
  if (!options.completion.empty() && options.completion != "bash" && options.completion != "zsh") {
    throw Error::usage(fmt::format("no completion for the shell '{}'", options.completion), {},
                       "give --completion bash or --completion zsh");
  }
  if (options.man_dir.empty() && options.completion.empty()) fmt::print("{}", help_text);
  return 0;
}

}  // namespace gpuscope::app
