#include "report/print.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "core/json_text.hpp"
#include "report/analysis_view.hpp"

namespace gpuscope::report {

void print_analysis(const analyze::Analysis& analysis, const PrintOptions& o) {
  const auto view = parse_view(o.aggregate);
  const auto metrics = parse_metrics(o.metrics);
  // Written as they are, not through a formatting buffer: they can be tens of MB.
  auto write = [](const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); };
  if (o.json) {
    std::fflush(stdout);
    write_json(std::cout, analysis_json(analysis), 2);
    std::cout << '\n';
    std::cout.flush();
  } else if (o.csv) {
    write(analysis_csv(analysis, view, metrics));
  } else {
    const bool color = !o.no_color && isatty(STDOUT_FILENO) != 0;
    write(analysis_text(analysis, view, metrics, color));
  }
}

}  // namespace gpuscope::report
