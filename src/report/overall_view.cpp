#include "report/overall_view.hpp"

#include <fmt/format.h>

#include "report/analysis_view.hpp"

namespace gpuscope::report {

using analyze::Analysis;
using nlohmann::json;

std::string overall_text(const Analysis& a, const Style& style) {
  std::vector<std::vector<std::string>> rows;
  bool estimated = false;  // a median from the quantile sketch is marked "≈"
  auto median_text = [&](bool exact, std::string text) {
    estimated = estimated || !exact;
    return exact ? text : "≈" + text;
  };
  for (const auto& m : kMetrics) {
    const auto& o = a.over_both[static_cast<std::size_t>(m.id)];
    if (!o) continue;
    rows.push_back({std::string(m.name), unit_of(m.id), format_value(m.id, o->mean),
                    median_text(o->median_exact, format_value(m.id, o->median)),
                    format_value(m.id, o->min), format_value(m.id, o->max)});
  }
  if (a.score) {
    rows.push_back({"efficiency_score", "0–1", fmt::format("{:.3f}", a.score->mean),
                    median_text(a.score->median_exact, fmt::format("{:.3f}", a.score->median)),
                    fmt::format("{:.3f}", a.score->min), fmt::format("{:.3f}", a.score->max)});
  }
  std::string out = "\n" + style.bold("Over all GPUs and time") + "\n";
  if (rows.empty()) return out + "  no metric has values in the analysed window\n";
  out += table({"metric", "unit", "mean", "median", "min", "max"}, rows, style);
  if (estimated) {
    out += style.dim(
               "≈ median estimated within 0.1 % (too many distinct values to count); "
               "the others are exact") +
           "\n";
  }
  return out;
}

json overall_json(const Analysis& a) {
  json over_both = json::object();
  for (const auto& m : kMetrics) {
    const auto& o = a.over_both[static_cast<std::size_t>(m.id)];
    if (!analyze::summarised(m.id)) continue;
    over_both[std::string(m.name)] = o ? json{{"unit", m.unit},
                                              {"count", o->count},
                                              {"mean", o->mean},
                                              {"median", o->median},
                                              {"min", o->min},
                                              {"max", o->max},
                                              {"median_exact", o->median_exact}}
                                       : json(nullptr);
  }
  return over_both;
}

json score_json(const Analysis& a) {
  return a.score ? json{{"mean", a.score->mean},
                        {"median", a.score->median},
                        {"min", a.score->min},
                        {"max", a.score->max}}
                 : json(nullptr);
}

std::string overall_csv(const Analysis& a) {
  auto num = [](double v) { return fmt::format("{}", v); };
  std::string out = "metric,unit,count,mean,median,min,max\n";
  for (const auto& m : kMetrics) {
    const auto& o = a.over_both[static_cast<std::size_t>(m.id)];
    if (!o) continue;
    out += fmt::format("{},{},{},{},{},{},{}\n", m.name, m.unit, o->count, num(o->mean),
                       num(o->median), num(o->min), num(o->max));
  }
  return out;
}

}  // namespace gpuscope::report
