// Load balance across GPUs: how uneven their activity was, and which GPUs straggled.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace gpuscope::analyze {

struct Straggler {
  std::size_t index = 0;        // position in the input
  double below_median = 0;      // fraction: 0.41 means 41 % less active than the median GPU
  double gpu_seconds_lost = 0;  // duration × (1 − activity / median)
};

struct Balance {
  std::size_t count = 0;  // GPUs with a known activity
  double mean = 0;
  double median = 0;
  double max_over_mean = 0;           // 1 when perfectly balanced
  double cv = 0;                      // coefficient of variation (population stddev / mean)
  std::vector<Straggler> stragglers;  // most lost first
};

// `activity[i]` is GPU i's time-averaged activity (0..1, NaN when unknown: ignored) over
// `duration_s[i]` seconds. A straggler is below the median by more than `threshold`
// (relative). Median is the interpolated one (mean of the middle two for an even count).
// No known activity gives a Balance of zeros; all GPUs at 0 gives max_over_mean 1 and cv 0;
// a median of 0 gives no stragglers. A GPU without a duration (NaN, or past the end of
// `duration_s`) has gpu_seconds_lost NaN and is listed after those with a known loss.
Balance load_balance(std::span<const double> activity, std::span<const double> duration_s,
                     double threshold = 0.15);

}  // namespace gpuscope::analyze
