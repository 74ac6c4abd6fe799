// Phases (docs/phases.md): per phase name and per instance in the text views, phases of --json
// and --aggregate phases' CSV.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "analyze/analysis.hpp"
#include "report/view_text.hpp"

namespace gpuscope::report {

// "Phases": per phase name, count, time, energy, share, power, saturation; empty without.
std::string phases_text(const analyze::Analysis& a, const Style& style);
// "Phase instances" (--aggregate phases): every instance listed, indented by nesting depth.
std::string phase_instances_text(const analyze::Analysis& a, const Style& style);
nlohmann::json phases_json(const analyze::Analysis& a);  // phases of --json; null without
// --aggregate phases as CSV: a row per instance; the header alone without phases.
std::string phases_csv(const analyze::Analysis& a);

}  // namespace gpuscope::report
