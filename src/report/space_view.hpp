// --aggregate space: each metric across the GPUs over time (the mean of their means per grid
// point, the lowest and highest GPU), as tables, over_space of --json and CSV.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analyze/analysis.hpp"
#include "core/metrics.hpp"
#include "report/view_text.hpp"

namespace gpuscope::report {

// A table per metric: at most 30 rows, neighbouring grid points merged.
std::string space_text(const analyze::Analysis& a, const std::vector<Metric>& metrics,
                       const Style& style);
nlohmann::json space_json(const analyze::Analysis& a);  // over_space of --json
std::string space_csv(const analyze::Analysis& a, const std::vector<Metric>& metrics);

}  // namespace gpuscope::report
