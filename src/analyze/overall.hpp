// The figures over all GPUs (analysis.hpp's over_both and score): what each GPU adds to them,
// merged in GPU order, and the sketches and counts a distributed analysis carries per task.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>

#include "analyze/analysis.hpp"
#include "analyze/stats.hpp"
#include "core/metrics.hpp"

namespace gpuscope::analyze {

struct PreparedDevice;  // analyzer.hpp

// Everything over all GPUs that one GPU adds to (count, compensated sum, extremes, exact counts
// of distinct values while there are few, quantile sketch): built per GPU, then merged in GPU
// order. The median is exact where the distinct values stayed within ValueCounts' limit.
struct OverallPart {
  std::size_t count = 0;
  double sum = 0, compensation = 0;  // Neumaier summation
  double min = 0, max = 0;
  QuantileSketch sketch{0.001};
  ValueCounts values;

  // Adds the sorted, NaN-free `sorted` values, whose compensated sum is `sum`.
  void add_sorted(std::span<const double> sorted, double sum);
  // How sorted add_sorted() needs its values: fully while the exact counts go on (nullptr),
  // else as far as the sketch's buckets tell them apart (summarize()'s `coarse`).
  const QuantileSketch* sort_resolution() const { return values.exact() ? nullptr : &sketch; }
  void merge(const OverallPart& other);
  std::optional<MetricOverall> result() const;
};

// Whether a GPU's metric counts in the figures over all GPUs: a GPU in MIG mode leaves out what
// its instances measure of their own (memory, saturation), which they stand for.
bool in_overall(const GpuKey& key, Metric metric);

// The quantile sketches and distinct-value counts of the figures over all GPUs: integer counts,
// so parts merged in any grouping give the same result as merging GPU by GPU (the one exception:
// values spanning more magnitudes than QuantileSketch::kMaxBuckets holds, folded as they come).
// The distributed analysis carries them per task instead of per GPU (they are most of a GPU's
// part: about 55 KB per metric).
struct OverallCounts {
  std::array<QuantileSketch, kMetricCount> sketch;
  std::array<ValueCounts, kMetricCount> values;
  QuantileSketch score_sketch;
  ValueCounts score_values;

  // Moves `device`'s sketches and counts here (those add_prepared would have merged).
  void take(PreparedDevice& device);
  void merge(const OverallCounts& other);
};

}  // namespace gpuscope::analyze
