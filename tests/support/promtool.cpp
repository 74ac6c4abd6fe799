#include "support/promtool.hpp"

#include <fstream>
#include <sstream>

#include "support/process.hpp"
#include "support/programs.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::testing {

std::string promtool() {
  return find_program("promtool");
}

PromtoolVerdict promtool_check_metrics(const std::string& page) {
  TempDir dir;
  std::ofstream(dir.file("page.txt")) << page;
  const auto result = run_process(
      {"/bin/sh", "-c", "\"$0\" check metrics < \"$1\"", promtool(), dir.file("page.txt")});
  PromtoolVerdict verdict{result.exit_code, {}};
  std::istringstream in(result.out + result.err);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) verdict.lines.push_back(line);
  }
  return verdict;
}

}  // namespace gpuscope::testing
