// The diagnosis: what the numbers mean, in plain words, each finding with its number.
#pragma once

#include <vector>

#include "analyze/analysis.hpp"

namespace gpuscope::analyze {

// A phase that took at least this share of the job's energy with the SMs less active than
// kPhaseIdleSmActivePct is said to have waited; phases with at least kPhaseVariationMinCount
// instances whose times vary by kPhaseVariationCv (standard deviation / mean) or more are said to
// vary (docs/phases.md).
inline constexpr double kPhaseEnergyShare = 0.05;
inline constexpr double kPhaseIdleSmActivePct = 10;
inline constexpr std::size_t kPhaseVariationMinCount = 8;
inline constexpr double kPhaseVariationCv = 0.10;

// Findings for `analysis`, most consequential first. Thresholds are in docs/analysis.md.
std::vector<Finding> diagnose(const Analysis& analysis);

}  // namespace gpuscope::analyze
