#include "ingest/value_screen.hpp"

#include <fmt/format.h>

#include "core/metric_ranges.hpp"
#include "util/utc_time.hpp"

namespace gpuscope::ingest {

unsigned ValueScreen::screen(SampleRow& row, std::int64_t line) {
  if (row.present.none()) return 0;
  unsigned left_out = 0;
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    if (!row.present.test(i)) continue;
    const double value = row.values[i];
    if (physically_possible(static_cast<Metric>(i), value)) continue;
    row.present.reset(i);
    row.values[i] = 0;
    Refused& r = refused_[i];
    if (r.count++ == 0) {
      r.first = value;
      r.line = line;
      r.wall_ns = row.wall_ns;
      r.device = row.device_index;
    }
    ++left_out;
  }
  total_ += left_out;
  return left_out;
}

std::vector<std::string> ValueScreen::said(const std::string& prefix) const {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    const Refused& r = refused_[i];
    if (r.count == 0) continue;
    const Metric metric = static_cast<Metric>(i);
    const std::string where = r.line > 0 ? fmt::format("line {}", r.line)
                                         : util::utc_text(r.wall_ns, "%Y-%m-%d %H:%M:%S UTC");
    out.push_back(fmt::format(
        "{}{}: {} value{} outside {} (impossible for it, or not a number) left out, e.g. {} at "
        "{} (GPU {}); the analysis has the others",
        prefix, info(metric).name, r.count, r.count == 1 ? "" : "s", physical_range(metric).text,
        r.first, where, r.device));
  }
  return out;
}

}  // namespace gpuscope::ingest
