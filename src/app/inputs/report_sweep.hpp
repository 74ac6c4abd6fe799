// The sweep sections of `gpuscope report`: a sweep database (gpuscope sweep -o) shows its sweep
// as the report's first section, the same section as the sweep's standalone page
// (report/sweep_section.hpp; docs/sweep.md, "Outputs").
#pragma once

#include <string>
#include <vector>

#include "analyze/analysis.hpp"

namespace gpuscope::app {

// One rendered section per input of `analysis` that holds sweep tables, in input order (ids
// "sweep", "sweep-2", ...); empty when none does.
std::vector<std::string> sweep_sections_html(const analyze::Analysis& analysis);

}  // namespace gpuscope::app
