#include "analyze/stats.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

namespace gpuscope::analyze {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

constexpr std::size_t kInsertionSort = 32;

// Where each bucket of one radix level starts in the output (start[b], start[buckets] = n).
using BucketStarts = std::array<std::uint32_t, 2049>;

// One level of the MSD radix sort: `from`'s n keys into `to`, bucketed by (key >> shift) &
// mask, stable. Long inputs are scattered as two halves side by side, so that runs of equal
// digits (quantised values) do not make every store wait for the previous increment of the same
// counter. Only the buckets in use are zeroed: small buckets recurse often.
void scatter(const std::uint64_t* from, std::uint64_t* to, std::size_t n, int shift,
             std::uint64_t mask, std::size_t buckets, BucketStarts& start) {
  std::array<std::uint32_t, 2048> next;
  std::fill_n(start.begin(), buckets + 1, 0U);
  if (n < 4096) {
    for (std::size_t i = 0; i < n; ++i) ++start[((from[i] >> shift) & mask) + 1];
    for (std::size_t b = 0; b < buckets; ++b) start[b + 1] += start[b];
    std::copy_n(start.begin(), buckets, next.begin());
    for (std::size_t i = 0; i < n; ++i) to[next[(from[i] >> shift) & mask]++] = from[i];
    return;
  }
  const std::size_t half = n / 2;
  std::array<std::uint32_t, 2048> second, next_second;
  std::fill_n(second.begin(), buckets, 0U);
  for (std::size_t i = 0; i < half; ++i) {
    ++start[((from[i] >> shift) & mask) + 1];
    ++second[(from[half + i] >> shift) & mask];
  }
  if (n % 2 != 0) ++second[(from[n - 1] >> shift) & mask];
  std::uint32_t offset = 0;
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::uint32_t first_half = start[b + 1];
    next[b] = offset;
    next_second[b] = offset + first_half;
    start[b] = offset;
    offset += first_half + second[b];
  }
  start[buckets] = offset;
  for (std::size_t i = 0; i < half; ++i) {
    const std::uint64_t a = from[i], b = from[half + i];
    to[next[(a >> shift) & mask]++] = a;
    to[next_second[(b >> shift) & mask]++] = b;
  }
  if (n % 2 != 0) to[next_second[(from[n - 1] >> shift) & mask]++] = from[n - 1];
}

// The digit of one level: the 11 (fewer for small ranges) highest bits in which some of the
// keys differ; false when they are all equal.
bool level_digit(const std::uint64_t* keys, std::size_t n, int& shift, std::uint64_t& mask,
                 std::size_t& buckets) {
  std::uint64_t all_ones = ~std::uint64_t{0}, any_ones = 0;
  for (std::size_t i = 0; i < n; ++i) {
    all_ones &= keys[i];
    any_ones |= keys[i];
  }
  const std::uint64_t varying = all_ones ^ any_ones;
  if (varying == 0) return false;
  const int top = 63 - std::countl_zero(varying);
  // About two keys per bucket for small ranges, at most 2048 buckets.
  const int width = std::clamp(static_cast<int>(std::bit_width(n)) - 1, 4, 11);
  shift = std::max(0, top + 1 - width);
  mask = (std::uint64_t{1} << width) - 1;
  buckets = std::size_t{1} << width;
  return true;
}

constexpr std::uint64_t kSign = std::uint64_t{1} << 63;
constexpr std::size_t kRadixThreshold = 256;  // below it std::sort is as fast

// IEEE-754 bit patterns mapped so that unsigned order is numeric order, and back.
std::uint64_t key_of(double value) {
  const auto bits = std::bit_cast<std::uint64_t>(value);
  return (bits & kSign) != 0 ? ~bits : bits | kSign;
}
double value_of(std::uint64_t key) {
  return std::bit_cast<double>((key & kSign) != 0 ? key & ~kSign : ~key);
}

// What a sort may leave out of order (summarize() with a coarse sketch): a run of keys that all
// fall into one bucket of `sketch` and hold none of the `wanted` positions (those the summary
// reads). The array is then ordered bucket by bucket, which is all the sketch's add_sorted()
// needs.
struct Coarse {
  static constexpr std::size_t kMinRun = 8;  // below it sorting costs less than two logarithms
  double bucket_span = 0;                    // a bucket's (max − min) / max, with a margin
  const QuantileSketch* sketch = nullptr;
  std::array<std::size_t, 8> wanted{};
  std::size_t wanted_count = 0;

  // Whether keys [begin, begin + n) of the whole array, all within [low, high], may stay as
  // they are.
  bool may_skip(std::size_t begin, std::size_t n, std::uint64_t low, std::uint64_t high) const {
    if (n < kMinRun) return false;
    for (std::size_t i = 0; i < wanted_count; ++i) {
      if (wanted[i] >= begin && wanted[i] < begin + n) return false;
    }
    const double a = value_of(low), b = value_of(high);
    if (std::isnan(a) || std::isnan(b)) return false;  // a range reaching past ±inf
    // Ends further apart than one bucket's ratio cannot share it: no logarithm needed to say
    // so (a range this filter lets through is still decided by bucket_of below).
    if (std::fabs(b - a) > std::max(std::fabs(a), std::fabs(b)) * bucket_span) return false;
    return sketch->bucket_of(a) == sketch->bucket_of(b);
  }
};

// The keys a bucket of one radix level can hold: the bits above the digit are those of `any`
// (all keys of the level share them), the digit is b, the bits below anything.
std::pair<std::uint64_t, std::uint64_t> bucket_range(std::uint64_t any, std::size_t b, int shift,
                                                     std::uint64_t mask) {
  const std::uint64_t below = (std::uint64_t{1} << shift) - 1;
  const std::uint64_t low = (any & ~((mask << shift) | below)) | (std::uint64_t{b} << shift);
  return {low, low | below};
}

void sort_into(std::uint64_t* from, std::uint64_t* to, std::size_t n, std::size_t begin,
               const Coarse* coarse);

// Sorts `keys` in place (with `scratch` of the same length) by an MSD radix sort that looks
// only at bits in which some keys differ, so noisy values in a narrow range are spread at once
// and quantised ones (few distinct values) are done as soon as a bucket holds one value. Each
// level scatters into the other buffer and its buckets are sorted back (sort_into), so no level
// copies its keys back. `begin`: where keys[0] is in the whole array; `coarse`: what may stay
// unsorted (nullptr: nothing).
void radix_sort(std::uint64_t* keys, std::uint64_t* scratch, std::size_t n, std::size_t begin,
                const Coarse* coarse) {
  if (n <= kInsertionSort) {
    for (std::size_t i = 1; i < n; ++i) {
      const std::uint64_t key = keys[i];
      std::size_t j = i;
      for (; j > 0 && keys[j - 1] > key; --j) keys[j] = keys[j - 1];
      keys[j] = key;
    }
    return;
  }
  int shift = 0;
  std::uint64_t mask = 0;
  std::size_t buckets = 0;
  if (!level_digit(keys, n, shift, mask, buckets)) return;  // all equal
  BucketStarts start;
  const std::uint64_t any = keys[0];
  scatter(keys, scratch, n, shift, mask, buckets, start);
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::size_t size = start[b + 1] - start[b];
    if (size == 0) continue;
    if (coarse != nullptr) {
      const auto [low, high] = bucket_range(any, b, shift, mask);
      if (coarse->may_skip(begin + start[b], size, low, high)) {
        std::copy_n(scratch + start[b], size, keys + start[b]);
        continue;
      }
    }
    sort_into(scratch + start[b], keys + start[b], size, begin + start[b], coarse);
  }
}

// Sorts `from`'s n keys into `to` (same length), `from` serving as scratch.
void sort_into(std::uint64_t* from, std::uint64_t* to, std::size_t n, std::size_t begin,
               const Coarse* coarse) {
  if (n <= kInsertionSort) {
    for (std::size_t i = 0; i < n; ++i) {  // insertion sort, from one buffer into the other
      const std::uint64_t key = from[i];
      std::size_t j = i;
      for (; j > 0 && to[j - 1] > key; --j) to[j] = to[j - 1];
      to[j] = key;
    }
    return;
  }
  int shift = 0;
  std::uint64_t mask = 0;
  std::size_t buckets = 0;
  if (!level_digit(from, n, shift, mask, buckets)) {
    std::copy_n(from, n, to);
    return;
  }
  BucketStarts start;
  const std::uint64_t any = from[0];
  scatter(from, to, n, shift, mask, buckets, start);
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::size_t size = start[b + 1] - start[b];
    if (size <= 1) continue;
    if (coarse != nullptr) {
      const auto [low, high] = bucket_range(any, b, shift, mask);
      if (coarse->may_skip(begin + start[b], size, low, high)) continue;
    }
    radix_sort(to + start[b], from + start[b], size, begin + start[b], coarse);
  }
}

// A compensated sum in four interleaved lanes (Kahan's summation in each, the lanes and their
// compensations added by Neumaier's at the end): long series of similar values keep their
// digits, and the four independent chains run about four times as fast as one (the mean is
// within 1 ulp of the exact one either way: tests/analyze/exact_overall_test.cpp).
class LaneSum {
 public:
  // The lanes are locals while adding, so that the compiler keeps them in registers (as members
  // they went through memory at every value); the arithmetic is the same.
  void add(std::span<const double> values) {
    double s0 = sum_[0], s1 = sum_[1], s2 = sum_[2], s3 = sum_[3];
    double c0 = compensation_[0], c1 = compensation_[1], c2 = compensation_[2],
           c3 = compensation_[3];
    std::size_t i = 0;
    for (; i + 4 <= values.size(); i += 4) {
      kahan(s0, c0, values[i]);
      kahan(s1, c1, values[i + 1]);
      kahan(s2, c2, values[i + 2]);
      kahan(s3, c3, values[i + 3]);
    }
    sum_ = {s0, s1, s2, s3};
    compensation_ = {c0, c1, c2, c3};
    for (std::size_t lane = 0; i < values.size(); ++i, ++lane) {
      kahan(sum_[lane], compensation_[lane], values[i]);
    }
  }
  double total() const {
    double sum = 0, compensation = 0;
    auto neumaier = [&](double x) {
      const double t = sum + x;
      compensation += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
      sum = t;
    };
    for (std::size_t lane = 0; lane < 4; ++lane) {
      neumaier(sum_[lane]);
      neumaier(-compensation_[lane]);
    }
    return sum + compensation;
  }

 private:
  static void kahan(double& sum, double& compensation, double value) {
    const double y = value - compensation;
    const double t = sum + y;
    compensation = (t - sum) - y;
    sum = t;
  }
  std::array<double, 4> sum_{}, compensation_{};
};

// The quantiles summarize() reports.
constexpr std::array<double, 3> kSummaryQuantiles = {0.05, 0.5, 0.95};

// The positions of n sorted values summarize() reads: the ends and the two values each quantile
// interpolates between (as quantile_sorted() finds them).
Coarse coarse_for(const QuantileSketch& sketch, std::size_t n) {
  Coarse coarse;
  coarse.sketch = &sketch;
  // A bucket spans (γ^(k−1), γ^k]: (max − min) / max = 1 − 1/γ = 2a / (1 + a).
  const double a = sketch.relative_accuracy();
  coarse.bucket_span = 2 * a / (1 + a) * 1.01;
  auto want = [&](std::size_t i) {
    if (i < n) coarse.wanted[coarse.wanted_count++] = i;
  };
  want(0);
  want(n - 1);
  for (double q : kSummaryQuantiles) {
    const auto lower = static_cast<std::size_t>(q * static_cast<double>(n - 1));
    want(lower);
    want(lower + 1);
  }
  return coarse;
}

// `values` without NaN, ascending, into `sorted`, and their compensated sum (LaneSum, taken in
// the values' order, so that it does not depend on how far they were sorted). Long series go
// through the radix sort above on the values' keys: on a GPU-hour of samples it is several
// times faster than std::sort, and gives the same sequence (equal values are bit-identical;
// only -0.0 and 0.0 may swap). With `coarse_sketch`, runs of values within one of its buckets
// may stay unsorted, except where summarize() reads (Coarse).
double sort_without_nan(std::span<const double> values, std::vector<double>& sorted,
                        const QuantileSketch* coarse_sketch) {
  const std::size_t n = values.size();
  if (sorted.size() < n) sorted.resize(n);
  // Reused by every call on this thread: a GPU-hour is ~0.3 MB of keys.
  thread_local std::vector<std::uint64_t> keys, scratch;
  const bool radix = n >= kRadixThreshold;
  if (radix && keys.size() < n) keys.resize(n);
  std::size_t kept = 0;
  for (double value : values) {  // branch-free: most series have no NaN
    sorted[kept] = value;
    if (radix) keys[kept] = key_of(value);
    kept += std::isnan(value) ? 0U : 1U;
  }
  sorted.resize(kept);
  LaneSum sum;
  sum.add(sorted);
  if (kept < kRadixThreshold) {
    std::sort(sorted.begin(), sorted.end());
    return sum.total();
  }
  if (scratch.size() < kept) scratch.resize(kept);
  const Coarse coarse = coarse_sketch != nullptr ? coarse_for(*coarse_sketch, kept) : Coarse{};
  radix_sort(keys.data(), scratch.data(), kept, 0, coarse_sketch != nullptr ? &coarse : nullptr);
  for (std::size_t i = 0; i < kept; ++i) sorted[i] = value_of(keys[i]);
  return sum.total();
}

}  // namespace

double quantile_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty() || std::isnan(q)) return kNaN;
  q = std::clamp(q, 0.0, 1.0);
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<std::size_t>(position);
  if (lower + 1 >= sorted.size()) return sorted.back();
  const double fraction = position - static_cast<double>(lower);
  // Written as a + f·(b − a) so equal neighbours give exactly that value.
  return sorted[lower] + fraction * (sorted[lower + 1] - sorted[lower]);
}

std::optional<Summary> summarize(std::span<const double> values) {
  std::vector<double> sorted;
  double sum = 0;
  return summarize(values, sorted, sum);
}

std::optional<Summary> summarize(std::span<const double> values, std::vector<double>& sorted,
                                 double& total, const QuantileSketch* coarse) {
  const double sum = sort_without_nan(values, sorted, coarse);
  total = sorted.empty() ? 0 : sum;
  if (sorted.empty()) return std::nullopt;
  Summary summary;
  summary.count = sorted.size();
  summary.mean = sum / static_cast<double>(sorted.size());
  summary.median = quantile_sorted(sorted, kSummaryQuantiles[1]);
  summary.p5 = quantile_sorted(sorted, kSummaryQuantiles[0]);
  summary.p95 = quantile_sorted(sorted, kSummaryQuantiles[2]);
  summary.min = sorted.front();
  summary.max = sorted.back();
  return summary;
}

void RunningStats::add(double value) {
  if (std::isnan(value)) return;
  ++count_;
  if (count_ == 1) {
    mean_ = value;
    m2_ = 0;
    min_ = max_ = value;
    return;
  }
  const double delta = value - mean_;
  mean_ += delta / static_cast<double>(count_);
  m2_ += delta * (value - mean_);
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
}

void RunningStats::merge(const RunningStats& other) {
  if (other.count_ == 0) return;
  if (count_ == 0) {
    *this = other;
    return;
  }
  const auto n_a = static_cast<double>(count_);
  const auto n_b = static_cast<double>(other.count_);
  const double n = n_a + n_b;
  const double delta = other.mean_ - mean_;
  mean_ += delta * n_b / n;
  m2_ += other.m2_ + delta * delta * n_a * n_b / n;
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

double RunningStats::variance() const {
  if (count_ < 2) return 0;
  return std::max(0.0, m2_ / static_cast<double>(count_));
}

double RunningStats::stddev() const {
  return std::sqrt(variance());
}

}  // namespace gpuscope::analyze
