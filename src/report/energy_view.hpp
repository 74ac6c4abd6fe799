// Energy and carbon (docs/analysis.md §6-8): the text section (counter, integrated power,
// clocks held down, work, carbon and the grid's periods), energy_j, work and carbon of --json,
// and --aggregate carbon's CSV.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "analyze/analysis.hpp"
#include "report/view_text.hpp"

namespace gpuscope::report {

// "Energy and carbon" for the text views.
std::string energy_text(const analyze::Analysis& a, const Style& style);
nlohmann::json energy_json(const analyze::Analysis& a);  // energy_j: counter and integrated
nlohmann::json work_json(const analyze::Analysis& a);    // work: units, name, energy per unit
nlohmann::json carbon_json(const analyze::Analysis& a);  // carbon, with the periods; null without
// --aggregate carbon as CSV: a row per grid period with energy; the header alone without.
std::string carbon_csv(const analyze::Analysis& a);

}  // namespace gpuscope::report
