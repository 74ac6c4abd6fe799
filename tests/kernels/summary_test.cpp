// The pure summaries against numbers computed by hand.
#include "kernels/summary.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuscope::kernels {
namespace {

TEST(KernelsSummary, OddCountMedianAndSampleStddev) {
  // 100, 200, 600: mean 300, median 200, sample variance (200² + 100² + 300²) / 2 = 70000.
  const DurationStats s = summarize({600, 100, 200});
  EXPECT_EQ(s.count, 3);
  EXPECT_EQ(s.total_ns, 900);
  EXPECT_DOUBLE_EQ(s.avg_ns, 300.0);
  EXPECT_DOUBLE_EQ(s.median_ns, 200.0);
  EXPECT_EQ(s.min_ns, 100);
  EXPECT_EQ(s.max_ns, 600);
  EXPECT_NEAR(s.stddev_ns, std::sqrt(70000.0), 1e-9);
}

TEST(KernelsSummary, EvenCountMedianIsMeanOfMiddleValues) {
  // 100, 200, 400, 600: median (200 + 400) / 2 = 300; mean 325;
  // variance (225² + 125² + 75² + 275²) / 3 = 147500 / 3.
  const DurationStats s = summarize({400, 600, 100, 200});
  EXPECT_DOUBLE_EQ(s.median_ns, 300.0);
  EXPECT_DOUBLE_EQ(s.avg_ns, 325.0);
  EXPECT_NEAR(s.stddev_ns, std::sqrt(147500.0 / 3.0), 1e-9);
}

TEST(KernelsSummary, SingleValueHasZeroStddevAndEmptyIsZero) {
  const DurationStats one = summarize({50});
  EXPECT_EQ(one.count, 1);
  EXPECT_DOUBLE_EQ(one.median_ns, 50.0);
  EXPECT_DOUBLE_EQ(one.stddev_ns, 0.0);
  const DurationStats none = summarize({});
  EXPECT_EQ(none.count, 0);
  EXPECT_EQ(none.total_ns, 0);
}

TEST(KernelsSummary, KernelRowsSortedByTotalWithShares) {
  KernelDurations d;
  d["relu"] = {300, 500};       // 800
  d["gemm"] = {100, 200, 600};  // 900
  d["reduce"] = {50};           // 50; all = 1750
  d["never"] = {};
  const auto rows = kernel_summary(d);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].name, "gemm");
  EXPECT_EQ(rows[1].name, "relu");
  EXPECT_EQ(rows[2].name, "reduce");
  EXPECT_NEAR(rows[0].time_percent, 100.0 * 900 / 1750, 1e-9);
  EXPECT_NEAR(rows[1].time_percent, 100.0 * 800 / 1750, 1e-9);
  EXPECT_NEAR(rows[2].time_percent, 100.0 * 50 / 1750, 1e-9);
  EXPECT_NEAR(rows[1].stats.stddev_ns, std::sqrt(20000.0), 1e-9);
}

TEST(KernelsSummary, TiesOrderedByName) {
  KernelDurations d;
  d["b"] = {10};
  d["a"] = {10};
  const auto rows = kernel_summary(d);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "a");
  EXPECT_DOUBLE_EQ(rows[0].time_percent, 50.0);
}

TEST(KernelsSummary, MemoryRowsSumBytesAndTime) {
  MemoryOps ops;
  ops["[CUDA memcpy Host-to-Device]"] = {{1000, 4000}, {3000, 8000}};
  ops["[CUDA memset]"] = {{200, 1000000}};
  const auto rows = memory_summary(ops);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].operation, "[CUDA memcpy Host-to-Device]");
  EXPECT_EQ(rows[0].stats.count, 2);
  EXPECT_EQ(rows[0].stats.total_ns, 4000);
  EXPECT_EQ(rows[0].total_bytes, 12000);
  EXPECT_NEAR(rows[0].time_percent, 100.0 * 4000 / 4200, 1e-9);
  EXPECT_EQ(rows[1].total_bytes, 1000000);
}

TEST(KernelsSummary, AppendConcatenatesPerName) {
  KernelDurations into{{"gemm", {1, 2}}};
  append(into, KernelDurations{{"gemm", {3}}, {"relu", {4}}});
  EXPECT_EQ(into["gemm"], (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(into["relu"], (std::vector<std::int64_t>{4}));
}

}  // namespace
}  // namespace gpuscope::kernels
