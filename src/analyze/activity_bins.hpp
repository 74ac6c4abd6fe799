// Pass 1 of the analysis: the samples' activity per time bin, from which the idle edges are
// found (analyzer.hpp's finish_activity), in exact fixed-point sums.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpuscope::analyze {

// What pass 1 gathered: per activity bin, the sum of the samples' activity in fixed point (units
// of 2^-60, so sums are exact and parts gathered apart add up to the same bits in any order) and
// how many there were; the latest time and the most samples of one GPU. What a task of the
// distributed analysis (load/partial) shares with the others to agree on the window.
__extension__ typedef __int128 ActivitySum;
struct ActivityPart {
  double width = 0;  // seconds per bin
  std::vector<ActivitySum> sum;
  std::vector<std::uint32_t> count;
  double max_t_s = 0;
  std::size_t max_gpu_samples = 0;

  static ActivitySum fixed(double value);  // |value| clamped to 2^40
  static double value(ActivitySum sum);
};

// Inline, as BinnedMean::add: pass 1 calls them once per sample.
inline ActivitySum ActivityPart::fixed(double value) {
  constexpr double kLimit = 0x1p40;  // an activity is 0..1; a damaged file's is kept bounded
  const double scaled = std::clamp(value, -kLimit, kLimit) * 0x1p60;
  // An activity fits in 64 bits: the processor's conversion truncates as the 128-bit one (a
  // libgcc call, most of pass 1's time on the main thread) does.
  if (std::fabs(scaled) < 0x1p63) return static_cast<std::int64_t>(scaled);
  return static_cast<ActivitySum>(scaled);
}

inline double ActivityPart::value(ActivitySum sum) {
  return static_cast<double>(sum) * 0x1p-60;
}

// Sum and count per time bin, growing as later times arrive, but never past kMaxActivityBins:
// a time beyond that doubles the bin width (merging neighbouring bins, which keeps every sum and
// count exact) until it fits. So memory is bounded whatever the timestamps say: a sample a year
// or a century after the others (a corrupted file, a clock step the reader could not undo)
// coarsens the grid instead of allocating in proportion to the span. The sums are exact (each
// value in fixed point, ActivityPart), so parts summed apart add up to the same bits in any order.
struct BinnedMean {
  static constexpr std::size_t kMaxActivityBins = std::size_t{1} << 21;  // 29 h at 50 ms, 40 MB

  double width = 0.1;
  std::vector<ActivitySum> sum;
  std::vector<std::uint32_t> count;

  void add(double t_s, double value) {
    if (std::isnan(value) || !(t_s >= 0) || !std::isfinite(t_s)) return;
    while (t_s / width >= static_cast<double>(kMaxActivityBins)) coarsen();
    const auto bin = static_cast<std::size_t>(t_s / width);
    grow(bin + 1);
    sum[bin] += ActivityPart::fixed(value);
    ++count[bin];
  }
  // Adds bins gathered apart from the same base width: the finer of the two is coarsened to the
  // other's width first, which gives the bins one pass over all the samples would have.
  void merge(BinnedMean other);
  void grow(std::size_t n) {
    if (n <= sum.size()) return;
    sum.resize(n, 0);
    count.resize(n, 0);
  }
  void coarsen();  // halves the bins: each pair of neighbours becomes one of twice the width
  std::vector<double> means() const;  // per bin, NaN where no sample fell
};

}  // namespace gpuscope::analyze
