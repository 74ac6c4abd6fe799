// Summary statistics over series: exact summaries of what fits in memory, streaming
// accumulators and a bounded-memory quantile sketch for what does not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace gpuscope::analyze {

struct StatsCodec;  // analyze/partial_codec: writes and reads their state exactly

struct Summary {
  std::size_t count = 0;
  double mean = 0, median = 0, p5 = 0, p95 = 0, min = 0, max = 0;
};

// Exact summary of `values`, NaNs skipped; nullopt when nothing is left. Quantiles interpolate
// linearly between order statistics (numpy's default), so they match a hand computation.
std::optional<Summary> summarize(std::span<const double> values);
class QuantileSketch;

// summarize() that also leaves the sorted, NaN-free values in `sorted` (a buffer reused across
// calls) and their compensated sum in `sum`: what the over-both figures are built from. With
// `coarse`, `sorted` need only be ordered as far as that sketch's add_sorted() can tell (runs of
// values within one of its buckets may stay unsorted, but never where the summary reads): all
// an over-both part needs once its exact value counts have given up, and much less sorting.
std::optional<Summary> summarize(std::span<const double> values, std::vector<double>& sorted,
                                 double& sum, const QuantileSketch* coarse = nullptr);

// The q-quantile (q clamped to 0..1) of already sorted, NaN-free values: linear interpolation
// at position q·(n − 1). NaN when `sorted` is empty or q is NaN.
double quantile_sorted(std::span<const double> sorted, double q);

// Count, mean, min, max and standard deviation in one pass (Welford; merge by Chan et al.),
// O(1) memory. Everything reads 0 while empty.
class RunningStats {
 public:
  void add(double value);  // NaN is ignored
  void merge(const RunningStats& other);
  std::size_t count() const { return count_; }
  double mean() const { return mean_; }
  double min() const { return min_; }
  double max() const { return max_; }
  double variance() const;  // population variance; 0 with fewer than 2 values
  double stddev() const;

 private:
  std::size_t count_ = 0;
  double mean_ = 0, m2_ = 0, min_ = 0, max_ = 0;
};

// Exact counts of the distinct values of a stream, kept while there are at most `limit` of
// them. Quantised metrics (integer %, MHz, °C, bytes, whole watts) take few distinct values over
// any number of samples, so their quantiles over all GPUs and time are exact at a cost bounded by
// the limit: O(distinct) memory, O(n) to add n sorted values, O(distinct) per merge. Past the
// limit it gives up for good (exact() turns false) and frees its memory; the caller then relies
// on a QuantileSketch. quantile() interpolates exactly as quantile_sorted() does over the same
// values, so both give the same double.
class ValueCounts {
 public:
  static constexpr std::size_t kDefaultLimit = 1 << 14;

  explicit ValueCounts(std::size_t limit = kDefaultLimit) : limit_(limit) {}
  void add_sorted(std::span<const double> sorted);
  // The bucket add() files a value in: its sign (0 for zero) and, for nonzero values, the index
  // of its magnitude's bucket. Monotone in the value.
  std::pair<int, std::int64_t> bucket_of(double value) const;  // ascending, NaN-free
  void merge(const ValueCounts& other);
  bool exact() const { return !given_up_; }
  // Stops counting values (only how many): a part merged into counts that already gave up
  // need not build its runs. The result is the same as giving up past the limit.
  void give_up();
  std::uint64_t count() const { return count_; }
  std::size_t distinct() const { return counts_.size(); }
  // The q-quantile (q clamped to 0..1); nullopt when empty, past the limit, or q is NaN.
  std::optional<double> quantile(double q) const;

 private:
  friend struct StatsCodec;
  std::vector<std::pair<double, std::uint64_t>> counts_;  // ascending, distinct values (−0 is 0)
  std::size_t limit_;
  std::uint64_t count_ = 0;
  bool given_up_ = false;
};

// Quantiles of an unbounded stream in bounded memory (DDSketch-like): a value x > 0 falls into
// logarithmic bucket k = ceil(log_γ x), γ = (1 + a) / (1 − a), a = `relative_accuracy`
// (clamped to [1e-6, 0.5]; NaN means the default); negative values mirror it, exact zeros
// have their own count. Each bucket stands for 2γ^k / (γ + 1), within a of everything in it,
// so quantile(q) is within relative error a of the linearly interpolated quantile of
// summarize() whenever the two order statistics it interpolates have the same sign (or one is
// 0); min and max are exact. Memory: one 8-byte count per bucket between the smallest and
// largest magnitude seen, i.e. ln(max/min) / ln γ buckets per sign (≈ 6,900, 55 KB, for six
// decades at the default a = 0.001), capped at kMaxBuckets per sign: beyond that span the smallest
// magnitudes are merged into the lowest kept bucket and lose the guarantee. Mergeable.
class QuantileSketch {
 public:
  static constexpr std::size_t kMaxBuckets = 1 << 16;

  explicit QuantileSketch(double relative_accuracy = 0.001);
  void add(double value);  // NaN is ignored; ±inf are counted as ±DBL_MAX
  // The same as add() for each of `sorted` (ascending, NaN-free), computing a bucket index only
  // O(log n) times per bucket the values fall into instead of once per value: bucket indices
  // are monotone in the value, so each bucket's values are one run found by galloping.
  void add_sorted(std::span<const double> sorted);
  // The bucket add() files a value in: its sign (0 for zero) and, for nonzero values, the index
  // of its magnitude's bucket. Monotone in the value.
  std::pair<int, std::int64_t> bucket_of(double value) const;
  // Adds `other`'s counts; with a different accuracy, its buckets are re-added at their
  // representative values, so the errors of both sketches add up.
  void merge(const QuantileSketch& other);
  std::size_t count() const { return count_; }
  double relative_accuracy() const;
  // The buckets from the lowest count to the highest of each sign: the log span of the values.
  std::size_t bucket_count() const { return positive_.span() + negative_.span(); }
  // Gives back the room kept to grow down and the vectors' spare capacity: for a finished sketch
  // that waits to be merged (the counts, and so every result, stay the same).
  void compact();
  // The buckets held in memory: at most bucket_count() + 1024 (the room kept to grow down).
  std::size_t held_buckets() const { return positive_.counts.size() + negative_.counts.size(); }
  // The q-quantile (q clamped to 0..1); nullopt when empty or q is NaN.
  std::optional<double> quantile(double q) const;

 private:
  friend struct StatsCodec;
  // Counts of consecutive bucket indices [offset, offset + counts.size()); the highest is never
  // zero. A vector, grown downwards with room (as much again as it holds, up to 1024 buckets,
  // within the cap), so that a falling series costs few moves: the zero buckets that room adds
  // count for nothing (no quantile, merge or fold sees a difference), and a merge walks memory in
  // order.
  struct Buckets {
    std::int64_t offset = 0;
    std::vector<std::uint64_t> counts;
    void add(std::int64_t index, std::uint64_t n);
    void compact() {
      std::size_t first = 0;
      while (first < counts.size() && counts[first] == 0) ++first;
      counts.erase(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(first));
      offset += static_cast<std::int64_t>(first);
      counts.shrink_to_fit();
    }
    std::size_t span() const {
      std::size_t first = 0;
      while (first < counts.size() && counts[first] == 0) ++first;
      return counts.size() - first;
    }
  };

  std::int64_t index_of(double magnitude) const;
  double value_of(std::int64_t index) const;
  void add_count(double value, std::uint64_t n);
  double value_at_rank(std::uint64_t rank) const;

  double gamma_;
  double log_gamma_;
  std::size_t count_ = 0;
  std::uint64_t zeros_ = 0;
  Buckets positive_;  // bucket k covers (γ^(k−1), γ^k]
  Buckets negative_;  // the same for −value
  double min_ = 0, max_ = 0;
};

}  // namespace gpuscope::analyze
