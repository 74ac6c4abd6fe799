#include "report/print.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "core/json_text.hpp"
#include "report/analysis_view.hpp"

namespace gpuscope::report {

void print_analysis(const analyze::Analysis& analysis, const PrintOptions& o) {
  const auto view = parse_view(o.aggregate);
  const auto metrics = parse_metrics(o.metrics);
  if (o.json) {
    fmt::print("{}\n", json_text(analysis_json(analysis), 2));
  } else if (o.csv) {
    fmt::print("{}", analysis_csv(analysis, view, metrics));
  } else {
    const bool color = !o.no_color && isatty(STDOUT_FILENO) != 0;
    fmt::print("{}", analysis_text(analysis, view, metrics, color));
  }
}

}  // namespace gpuscope::report
