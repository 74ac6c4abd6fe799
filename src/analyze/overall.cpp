#include "analyze/overall.hpp"

#include <algorithm>
#include <cmath>

#include "analyze/analyzer.hpp"

namespace gpuscope::analyze {
namespace {

// Neumaier summation: the part sums differ in size, so keep what each addition rounds away.
void add_compensated(double& sum, double& compensation, double x) {
  const double t = sum + x;
  compensation += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
  sum = t;
}

}  // namespace

void OverallPart::add_sorted(std::span<const double> sorted, double part_sum) {
  if (sorted.empty()) return;
  min = count == 0 ? sorted.front() : std::min(min, sorted.front());
  max = count == 0 ? sorted.back() : std::max(max, sorted.back());
  count += sorted.size();
  add_compensated(sum, compensation, part_sum);
  sketch.add_sorted(sorted);
  values.add_sorted(sorted);
}

void OverallPart::merge(const OverallPart& other) {
  if (other.count == 0) return;
  min = count == 0 ? other.min : std::min(min, other.min);
  max = count == 0 ? other.max : std::max(max, other.max);
  count += other.count;
  add_compensated(sum, compensation, other.sum);
  add_compensated(sum, compensation, other.compensation);
  sketch.merge(other.sketch);
  values.merge(other.values);
}

std::optional<MetricOverall> OverallPart::result() const {
  if (count == 0) return std::nullopt;
  const double mean = (sum + compensation) / static_cast<double>(count);
  if (const auto exact = values.quantile(0.5)) {
    return MetricOverall{count, mean, *exact, min, max, true};
  }
  return MetricOverall{count, mean, sketch.quantile(0.5).value_or(mean), min, max, false};
}

// What a MIG instance measures of its own: its memory and its saturation metrics. A GPU in MIG
// mode reports the same over the whole GPU; in the statistics over all GPUs its instances stand
// for it, so that no SM or byte is counted twice (its own row keeps its whole-GPU figures).
bool in_overall(const GpuKey& key, Metric metric) {
  const bool mig_parent = !key.mig && key.mig_enabled.value_or(false);
  if (!mig_parent) return true;
  const bool memory = metric >= Metric::MemoryUsedBytes && metric <= Metric::MemoryReservedBytes;
  const bool saturation = metric >= Metric::GraphicsActivePct && metric <= Metric::IntegerActivePct;
  return !(memory || saturation || metric == Metric::FlopActivePct);
}

void OverallCounts::take(PreparedDevice& device) {
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    OverallPart& part = device.overall[m];
    if (in_overall(device.report.key, static_cast<Metric>(m))) {
      sketch[m].merge(part.sketch);
      values[m].merge(part.values);
    }
    part.sketch = QuantileSketch{0.001};
    part.values = ValueCounts{};
  }
  score_sketch.merge(device.score.sketch);
  score_values.merge(device.score.values);
  device.score.sketch = QuantileSketch{0.001};
  device.score.values = ValueCounts{};
}

void OverallCounts::merge(const OverallCounts& other) {
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    sketch[m].merge(other.sketch[m]);
    values[m].merge(other.values[m]);
  }
  score_sketch.merge(other.score_sketch);
  score_values.merge(other.score_values);
}

}  // namespace gpuscope::analyze
