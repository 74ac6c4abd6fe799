// Renders an Analysis: terminal tables for people (units, widths that fit, colour only on a
// terminal), JSON and CSV for machines (shapes in docs/analysis.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analyze/analysis.hpp"

namespace gpuscope::report {

enum class View { Summary, Time, Space, All, Carbon, Phases, Node };

// "summary", "time", "space", "all" (and "both" for summary), "carbon" (the grid series' periods
// with the job's energy and carbon in each), "phases" (every phase instance), "node" (the node's
// energy); throws Error::usage otherwise.
View parse_view(const std::string& text);
// Metric names for the time and space views; empty → a useful default set, "all" → every
// summarised metric. Throws Error::usage naming an unknown metric.
std::vector<Metric> parse_metrics(const std::vector<std::string>& names);

std::string analysis_text(const analyze::Analysis& analysis, View view,
                          const std::vector<Metric>& metrics, bool color);
nlohmann::json analysis_json(const analyze::Analysis& analysis);
std::string analysis_csv(const analyze::Analysis& analysis, View view,
                         const std::vector<Metric>& metrics);

// Energy in the unit that reads best: "850 J", "148.8 kJ", "2.41 MJ", "1.20 kWh".
std::string format_energy(double joules);
// A metric's value as a number in its display unit (bytes as GiB, rates as GB/s), no unit.
std::string format_value(Metric metric, double value);

}  // namespace gpuscope::report
