#include "report/view_text.hpp"

#include <fmt/format.h>

#include "util/text_table.hpp"

namespace gpuscope::report {

using analyze::Analysis;

bool several_hosts(const Analysis& a) {
  for (const auto& g : a.gpus) {
    const auto& first = a.gpus.front().key;
    if (g.key.where() != first.where() || g.key.rank != first.rank) return true;
  }
  return false;
}

std::string pct(double fraction) {
  return fmt::format("{:.0f} %", 100 * fraction);
}

std::string seconds_text(double s) {
  if (s >= 3600) return fmt::format("{:.2f} h", s / 3600);
  if (s >= 120) return fmt::format("{:.1f} min", s / 60);
  return fmt::format("{:.1f} s", s);
}

// A table with left-aligned first column and right-aligned others, widths fitted to content.
std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows, const Style& style) {
  const auto text = util::render_table(header, rows, {{util::Align::Left}, false});
  return style.bold(text.header) + text.body;
}

// The unit values are shown in (bytes as GiB, rates as GB/s).
std::string unit_of(Metric m) {
  const std::string_view unit = info(m).unit;
  if (unit == "B") return "GiB";
  if (unit == "B/s") return "GB/s";
  return std::string(unit);
}

nlohmann::json summary_json(const analyze::Summary& s) {
  return {{"count", s.count}, {"mean", s.mean}, {"median", s.median}, {"p5", s.p5},
          {"p95", s.p95},     {"min", s.min},   {"max", s.max}};
}

}  // namespace gpuscope::report
