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
// the change point minimising the two segments' squared error (searched within the first (last)
// half of the run), refined to where activity crosses halfway between the two levels next to
// it (never past the 30 %). Never cuts everything: a run that is idle throughout is kept whole.
// NaN bins take no part (a cut takes those before it along; uncut ones stay); with fewer than
// 5 reporting bins nothing is cut. With All, the trailing edge is sought in what the leading
// cut kept. `leading_s` = begin × bin_s, `trailing_s` = (size − end) × bin_s.
TrimResult detect_idle(std::span<const double> activity, double bin_s, TrimMode mode);

// "leading", "trailing", "all", "none" → TrimMode; throws Error::usage otherwise.
TrimMode parse_trim_mode(const std::string& text);

}  // namespace gpuscope::analyze
