#include "analyze/balance.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "analyze/stats.hpp"

namespace gpuscope::analyze {

Balance load_balance(std::span<const double> activity, std::span<const double> duration_s,
                     double threshold) {
  Balance balance;
  RunningStats stats;
  std::vector<double> known;
  for (double value : activity) {
    if (std::isnan(value)) continue;
    stats.add(value);
    known.push_back(value);
  }
  balance.count = known.size();
  if (known.empty()) return balance;
  std::sort(known.begin(), known.end());

  balance.mean = stats.mean();
  balance.median = quantile_sorted(known, 0.5);
  // All GPUs idle is perfectly balanced, not undefined.
  balance.max_over_mean = stats.mean() > 0 ? stats.max() / stats.mean() : 1;
  balance.cv = stats.mean() > 0 ? stats.stddev() / stats.mean() : 0;
  if (!(balance.median > 0)) return balance;

  for (std::size_t i = 0; i < activity.size(); ++i) {
    if (std::isnan(activity[i])) continue;
    const double below = 1 - activity[i] / balance.median;
    if (!(below > threshold)) continue;
    const double duration =
        i < duration_s.size() ? duration_s[i] : std::numeric_limits<double>::quiet_NaN();
    balance.stragglers.push_back(
        {.index = i, .below_median = below, .gpu_seconds_lost = duration * below});
  }
  // Most lost first; an unknown loss (no duration) after every known one.
  std::sort(balance.stragglers.begin(), balance.stragglers.end(),
            [](const Straggler& a, const Straggler& b) {
              const bool a_known = !std::isnan(a.gpu_seconds_lost);
              const bool b_known = !std::isnan(b.gpu_seconds_lost);
              if (a_known != b_known) return a_known;
              if (a_known && a.gpu_seconds_lost != b.gpu_seconds_lost) {
                return a.gpu_seconds_lost > b.gpu_seconds_lost;
              }
              if (a.below_median != b.below_median) return a.below_median > b.below_median;
              return a.index < b.index;
            });
  return balance;
}

}  // namespace gpuscope::analyze
