// The GPUs' health in analyze's text and JSON (docs/health.md): what rose during the run, the
// state at its end, and the health events.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "analyze/analysis.hpp"

namespace gpuscope::report {

// "GPU health" for the text view: one line when every GPU stayed clean, else a table of the GPUs
// with something to say; empty when the runs have no health data (before schema 1.8).
std::string health_text(const analyze::Analysis& a, bool color);
// {"events": [...], "gpus": [{"gpu", "first_s", "last_s", "during_run": {...}, "at_end": {...}}]}
nlohmann::json health_json(const analyze::Analysis& a);

}  // namespace gpuscope::report
