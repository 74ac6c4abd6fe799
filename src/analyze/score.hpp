// gssr's efficiency score: one number in [0, 1) per sample from SM activity, FLOP activity and
// occupancy. Indicative only: it compares runs of one workload, not different workloads.
#pragma once

#include <optional>

namespace gpuscope::analyze {

// Fitted parameters (docs/analysis.md §4, from gssr).
struct ScoreParameters {
  double alpha = 24.021653821773356;
  double beta = 3.093540559022677;
  double gamma = 2.0510278298480444;
  double lambda = 11.44627875155378;
};

// S = 4·[σ(αA) − 0.5]·[σ(βF + γ·O·e^(−λF)) − 0.5], σ the logistic function; A = SM active,
// F = FLOP active = FP64 + FP32 + FP16 + tensor, O = SM occupancy, all ratios (0..1).
// Inputs below 0 count as 0, so S ∈ [0, 1) for ratios in 0..1 (F may exceed 1: it sums four
// pipes). nullopt when an input is NaN or infinite.
std::optional<double> efficiency_score(double sm_active, double flop_active, double occupancy,
                                       const ScoreParameters& parameters = {});

}  // namespace gpuscope::analyze
