// The runs in analyze's output: the text view's header (each run, what its data lacks, the
// window the statistics cover) and runs[] of --json.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "analyze/analysis.hpp"
#include "report/view_text.hpp"

namespace gpuscope::report {

// The header of every text view: the runs, their problems, the idle edges left out.
std::string runs_text(const analyze::Analysis& a, const Style& style);
// runs[] of --json: each run's identity, job, command and status.
nlohmann::json runs_json(const analyze::Analysis& a);

}  // namespace gpuscope::report
