// --aggregate time: each GPU's statistics over time, per metric, as a table and as CSV.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analyze/analysis.hpp"
#include "core/metrics.hpp"
#include "report/view_text.hpp"

namespace gpuscope::report {

// "Per GPU over time": mean, median, p5, p95, max of each metric, a row per GPU and metric.
std::string time_text(const analyze::Analysis& a, const std::vector<Metric>& metrics,
                      const Style& style);
std::string time_csv(const analyze::Analysis& a, const std::vector<Metric>& metrics);

}  // namespace gpuscope::report
