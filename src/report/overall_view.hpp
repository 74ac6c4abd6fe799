// The figures over all GPUs and time (docs/analysis.md): the summary table, over_both and
// efficiency_score of --json, and the summary view's CSV.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "analyze/analysis.hpp"
#include "report/view_text.hpp"

namespace gpuscope::report {

// "Over all GPUs and time": each metric's mean, median, min and max, and the efficiency score.
std::string overall_text(const analyze::Analysis& a, const Style& style);
nlohmann::json overall_json(const analyze::Analysis& a);  // over_both of --json
nlohmann::json score_json(const analyze::Analysis& a);    // efficiency_score of --json
std::string overall_csv(const analyze::Analysis& a);      // --csv's summary view

}  // namespace gpuscope::report
