// The diagnosis: what the numbers mean, in plain words, each finding with its number.
#pragma once

#include <vector>

#include "analyze/analysis.hpp"

namespace gpuscope::analyze {

// Findings for `analysis`, most consequential first. Thresholds are in docs/analysis.md.
std::vector<Finding> diagnose(const Analysis& analysis);

}  // namespace gpuscope::analyze
