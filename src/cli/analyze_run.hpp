// The work of `gpuscope analyze`: read the run databases, feed the analyzer in two passes, print.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpuscope::cli {

struct AnalyzeOptions {
  std::vector<std::string> inputs;
  std::string trim = "leading";
  std::string aggregate = "summary";
  std::vector<std::string> metrics;
  double resolution_s = 0;
  bool json = false;
  bool csv = false;
  std::optional<double> carbon_intensity;
  std::optional<std::string> region;
  double pue = 1.0;
  std::string work_regex;
  std::optional<double> work_units;
  std::string work_name = "units";
  double straggler_threshold = 0.15;
  bool no_color = false;
};

int run_analyze(const AnalyzeOptions& options);

}  // namespace gpuscope::cli
