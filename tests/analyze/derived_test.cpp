// FLOP activity, derived per sample from the four pipes (docs/analysis.md, "FLOP activity").
#include "analyze/derived.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/metrics.hpp"

namespace gpuscope::analyze {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

DeviceSeries series(std::size_t n) {
  DeviceSeries d;
  for (std::size_t i = 0; i < n; ++i) d.t_s.push_back(static_cast<double>(i));
  return d;
}

std::vector<double>& values(DeviceSeries& d, Metric m) {
  return d.values[static_cast<std::size_t>(m)];
}

TEST(Derived, FlopActivityIsTheSumOfTheFourPipes) {
  DeviceSeries d = series(3);
  values(d, Metric::Fp64ActivePct) = {0, 10, 1};
  values(d, Metric::Fp32ActivePct) = {5, 20, 2};
  values(d, Metric::Fp16ActivePct) = {0, 30, kNaN};
  values(d, Metric::TensorActivePct) = {60, 50, 4};
  derive_metrics(d);
  const auto& flop = d.of(Metric::FlopActivePct);
  ASSERT_EQ(flop.size(), 3U);
  EXPECT_DOUBLE_EQ(flop[0], 65);
  EXPECT_DOUBLE_EQ(flop[1], 110) << "four pipes can be busy at once: above 100 %";
  EXPECT_TRUE(std::isnan(flop[2])) << "a missing pipe gives no value, never a partial sum";
}

TEST(Derived, NoPipesNoFlopActivity) {
  DeviceSeries d = series(2);
  values(d, Metric::Fp32ActivePct) = {5, 6};
  derive_metrics(d);
  // No sample has FLOP activity: the column is empty, as a metric the GPU lacks is read.
  EXPECT_TRUE(d.of(Metric::FlopActivePct).empty());
}

TEST(Derived, TheCatalogStoresNoDerivedMetric) {
  EXPECT_EQ(kStoredMetricCount + 1, kMetricCount);
  EXPECT_EQ(stored_metrics().size(), kStoredMetricCount);
  EXPECT_EQ(stored_metrics().back().name, "amd_throttle_status");
  EXPECT_EQ(metric_by_name("flop_active"), Metric::FlopActivePct);
  EXPECT_EQ(metric_by_name("total_flop_activity"), Metric::FlopActivePct);
  EXPECT_EQ(metric_by_name("sm_active"), Metric::SmActivePct);
  EXPECT_EQ(metric_by_name("fb_used"), Metric::MemoryUsedBytes);
  EXPECT_EQ(metric_by_name("pcie_tx_bytes"), Metric::PcieTxBytes) << "gpuscope's counter";
  EXPECT_FALSE(metric_by_name("sm_activ"));
}

}  // namespace
}  // namespace gpuscope::analyze
