// Finding the idle warm-up and tail of a run, to leave them out of the statistics
// (--detect-outliers). Method in docs/analysis.md.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace gpuscope::analyze {

enum class TrimMode { Leading, Trailing, All, None };

struct TrimResult {
  std::size_t begin = 0;  // first bin kept
  std::size_t end = 0;    // one past the last bin kept
  double leading_s = 0;   // seconds cut at the start
  double trailing_s = 0;  // seconds cut at the end
};

// Finds an idle prefix and/or suffix of `activity` (one value per time bin of `bin_s` seconds,
// a fraction 0..1, NaN where no GPU reported) and returns the bins to keep. An edge segment is
// cut only when it lies within the first (last) 30 % of the run and is clearly less active than
// the rest: its mean activity is below half the rest's and at least 0.15 lower. The cut point is
// the change point minimising the two segments' squared error, refined to where activity first
// (last) crosses halfway between the two levels. Never cuts everything: a run that is idle
// throughout is kept whole.
TrimResult detect_idle(std::span<const double> activity, double bin_s, TrimMode mode);

// "leading", "trailing", "all", "none" → TrimMode; throws Error::usage otherwise.
TrimMode parse_trim_mode(const std::string& text);

}  // namespace gpuscope::analyze
