// An analysis on standard output, as `gpuscope analyze` prints it: text (coloured on a
// terminal), JSON or CSV.
#pragma once

#include <string>
#include <vector>

#include "analyze/analysis.hpp"

namespace gpuscope::report {

struct PrintOptions {
  std::string aggregate = "summary";  // the view (report/analysis_view.hpp)
  std::vector<std::string> metrics;   // for the time and space views
  bool json = false;
  bool csv = false;
  bool no_color = false;  // no colour even on a terminal
};

// Prints `analysis` on stdout as `options` ask; throws Error::usage for an unknown view or
// metric.
void print_analysis(const analyze::Analysis& analysis, const PrintOptions& options);

}  // namespace gpuscope::report
