// The numbers of a sweep once its trials have run: outlier repeats, the spread per setting and
// the recommended settings (docs/sweep.md, "Recommendations"). Pure functions, no I/O.
#pragma once

#include <vector>

#include "core/sweep.hpp"

namespace gpuscope::sweep {

// Which of `values` (the repeats of one setting) are outliers: with three or more values, those
// whose robust z-score 0.6745·|x − median| / MAD exceeds 3.5 (Iglewicz and Hoaglin) and which
// also lie more than `min_relative` (5 %) from the median, so that a tiny MAD between nearly
// equal repeats does not flag ordinary jitter. Fewer than three values: none.
std::vector<bool> flag_outliers(const std::vector<double>& values, double min_relative = 0.05);

// Sets Trial::outlier on the successful trials: a repeat is an outlier when its time or its
// energy is (flag_outliers over the repeats of its setting).
void mark_outliers(std::vector<Trial>& trials);

// Mean, min, max and sample standard deviation (0 for one value). Empty input: count 0.
Spread spread_of(const std::vector<double>& values);

// One summary per setting of `plan` (same order) over its "ok" trials that are not outliers.
// Settings without such trials have trials/outliers counted and a zero-count time spread.
std::vector<SettingSummary> summarize(const std::vector<Setting>& plan,
                                      const std::vector<Trial>& trials);

struct SelectorOptions {
  double max_slowdown = 0.10;  // fraction of the baseline's time
  double eta = 0.5;            // Zeus: weight of energy against time
  double p_max_w = 0;          // Zeus: maximum power (sum over the GPUs)
};

// The four recommendations, in this order: minimum energy; minimum energy × delay; minimum
// energy with time ≤ (1 + max_slowdown) × the baseline's; Zeus's cost η·E + (1 − η)·P_max·T.
// Each compares the mean energy and time of its setting with the baseline's. Ties go to the
// higher setting (less slowdown). Empty when the baseline has no successful trial.
std::vector<Recommendation> recommend(const std::vector<SettingSummary>& summaries,
                                      const SelectorOptions& options);

}  // namespace gpuscope::sweep
