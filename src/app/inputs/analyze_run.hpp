// `gpuscope analyze` and `gpuscope report`, start to end: inputs resolved through the ingest
// layer (foreign formats read through a temporary run database), the analysis loaded, then
// printed (analyze), written as HTML or drawn as static plots (report).
#pragma once

#include <string>

#include "app/inputs/plot_request.hpp"
#include "load/loader.hpp"

namespace gpuscope::app {

struct AnalyzeRun {
  load::AnalyzeOptions analyze;
  bool plot_time_series = false;     // -pts
  bool plot_load_balancing = false;  // -plb
  std::string plot_prefix;
  PlotRequest plots;
};

// Prints the analysis of `o.analyze.inputs` (text, JSON or CSV) and draws the plots asked for;
// returns the exit code. Throws Error (usage for bad options or input).
int run_analyze(AnalyzeRun o);

struct ReportRun {
  load::AnalyzeOptions analyze;
  std::string output;
  std::string title;
  std::string format;  // html, png, svg, pdf; empty: from the output's extension, else html
  PlotRequest plots;
};

// Writes the self-contained HTML report, or the static plots; returns the exit code.
int run_report(const ReportRun& o);

}  // namespace gpuscope::app
