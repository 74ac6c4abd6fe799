// The processes that used each GPU (docs/processes.md): their table in the text views and
// processes[] of --json.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "analyze/analysis.hpp"
#include "report/view_text.hpp"

namespace gpuscope::report {

// "Processes on the GPUs"; empty when the runs recorded none.
std::string processes_text(const analyze::Analysis& a, const Style& style);
nlohmann::json processes_json(const analyze::Analysis& a);  // processes[] of --json

}  // namespace gpuscope::report
