// promtool, Prometheus' own checker of exposition pages (Debian's prometheus package).
#pragma once

#include <string>
#include <vector>

namespace gpuscope::testing {

// promtool's path, "" when it is not installed (tests that need it skip).
std::string promtool();

struct PromtoolVerdict {
  int exit_code = -1;
  std::vector<std::string> lines;  // what it printed, in order, blank lines left out
};

// `promtool check metrics < page`.
PromtoolVerdict promtool_check_metrics(const std::string& page);

}  // namespace gpuscope::testing
