#include "analyze/stats.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace gpuscope::analyze {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(Summarize, TenValuesUnsortedWithNaNs) {
  // 1..10 shuffled, NaNs skipped. Positions q·(n − 1) with n = 10:
  // median 4.5 → 5 + 0.5·1 = 5.5; p5 0.45 → 1 + 0.45 = 1.45; p95 8.55 → 9 + 0.55 = 9.55.
  const std::vector<double> values = {7, kNaN, 1, 10, 4, 2, kNaN, 9, 3, 8, 6, 5};
  const auto summary = summarize(values);
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->count, 10u);
  EXPECT_DOUBLE_EQ(summary->mean, 5.5);
  EXPECT_DOUBLE_EQ(summary->median, 5.5);
  EXPECT_DOUBLE_EQ(summary->p5, 1.45);
  EXPECT_DOUBLE_EQ(summary->p95, 9.55);
  EXPECT_EQ(summary->min, 1);
  EXPECT_EQ(summary->max, 10);
}

TEST(Summarize, ThreeValues) {
  // Sorted {1, 2, 4}: mean 7/3; median position 1 → 2; p5 position 0.1 → 1 + 0.1·1 = 1.1;
  // p95 position 1.9 → 2 + 0.9·2 = 3.8.
  const std::vector<double> values = {4, 1, 2};
  const auto summary = summarize(values);
  ASSERT_TRUE(summary);
  EXPECT_DOUBLE_EQ(summary->mean, 7.0 / 3.0);
  EXPECT_DOUBLE_EQ(summary->median, 2);
  EXPECT_DOUBLE_EQ(summary->p5, 1.1);
  EXPECT_DOUBLE_EQ(summary->p95, 3.8);
}

TEST(Summarize, OneValueIsEveryStatistic) {
  const std::vector<double> values = {kNaN, 0.25};
  const auto summary = summarize(values);
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->count, 1u);
  for (double statistic :
       {summary->mean, summary->median, summary->p5, summary->p95, summary->min, summary->max}) {
    EXPECT_EQ(statistic, 0.25);
  }
}

TEST(Summarize, NothingLeftIsNullopt) {
  EXPECT_FALSE(summarize({}));
  const std::vector<double> all_nan = {kNaN, kNaN};
  EXPECT_FALSE(summarize(all_nan));
}

// The radix sort inside summarize() against std::sort, on the shapes metrics have: noisy values
// in a narrow range, quantised values with long runs, both signs, huge spreads, and NaNs.
TEST(Summarize, SortsLargeSeriesLikeStdSort) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> noise(-3, 3);
  std::vector<std::vector<double>> cases(6, std::vector<double>(20000));
  for (std::size_t i = 0; i < 20000; ++i) {
    cases[0][i] = 88 + noise(rng);
    cases[1][i] = i % 97 < 90 ? 100 : std::round(50 + 10 * noise(rng));
    cases[2][i] = noise(rng) * std::pow(10.0, static_cast<double>(rng() % 40) - 20);
    cases[3][i] = std::bit_cast<double>(rng() >> 2);  // any pattern short of NaN
    cases[4][i] = i % 5 == 0 ? kNaN : (i % 3 == 0 ? -0.0 : static_cast<double>(rng() % 4));
    cases[5][i] = 700;
  }
  for (std::size_t c = 0; c < cases.size(); ++c) {
    std::vector<double> expected;
    for (double v : cases[c]) {
      if (!std::isnan(v)) expected.push_back(v);
    }
    std::sort(expected.begin(), expected.end());
    std::vector<double> sorted;
    double sum = -1;
    const auto summary = summarize(cases[c], sorted, sum);
    ASSERT_TRUE(summary) << c;
    ASSERT_EQ(sorted.size(), expected.size()) << c;
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      ASSERT_EQ(sorted[i], expected[i]) << "case " << c << " at " << i;  // -0.0 == 0.0
    }
    EXPECT_EQ(summary->count, expected.size());
    EXPECT_EQ(summary->median, quantile_sorted(expected, 0.5)) << c;
    EXPECT_EQ(summary->p5, quantile_sorted(expected, 0.05)) << c;
    EXPECT_EQ(summary->p95, quantile_sorted(expected, 0.95)) << c;
    EXPECT_EQ(summary->min, expected.front());
    EXPECT_EQ(summary->max, expected.back());
    EXPECT_EQ(summary->mean, sum / static_cast<double>(expected.size())) << c;
    // The same summary as the plain overload.
    EXPECT_EQ(summarize(cases[c])->mean, summary->mean);
  }
}

// With a coarse sketch the sort may leave runs within one of its buckets unsorted: the summary
// is the same to the bit, and the sketch fed the partly sorted values counts what it counts from
// the sorted ones, on the same shapes.
TEST(Summarize, CoarseSortGivesTheSameSummaryAndSketch) {
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<double> noise(-3, 3);
  std::vector<std::vector<double>> cases(5, std::vector<double>(30000));
  for (std::size_t i = 0; i < 30000; ++i) {
    cases[0][i] = (i % 12 < 9 ? 88 : 25) + noise(rng);  // two clusters, as a training step's
    cases[1][i] = i % 97 < 90 ? 100 : std::round(50 + 10 * noise(rng));
    cases[2][i] = noise(rng) * std::pow(10.0, static_cast<double>(rng() % 40) - 20);
    cases[3][i] = i % 5 == 0 ? kNaN : (i % 3 == 0 ? -0.0 : noise(rng) * 1e-300);
    cases[4][i] = i % 7 == 0 ? std::numeric_limits<double>::infinity() : 7e307 + noise(rng) * 1e306;
  }
  std::size_t left_unsorted = 0;
  for (std::size_t c = 0; c < cases.size(); ++c) {
    std::vector<double> full, coarse;
    double full_sum = -1, coarse_sum = -2;
    const QuantileSketch resolution;
    const auto a = summarize(cases[c], full, full_sum);
    const auto b = summarize(cases[c], coarse, coarse_sum, &resolution);
    ASSERT_TRUE(a && b) << c;
    EXPECT_EQ(a->count, b->count) << c;
    for (auto f : {&Summary::mean, &Summary::median, &Summary::p5, &Summary::p95, &Summary::min,
                   &Summary::max}) {
      EXPECT_EQ(std::bit_cast<std::uint64_t>((*a).*f), std::bit_cast<std::uint64_t>((*b).*f)) << c;
    }
    EXPECT_EQ(std::bit_cast<std::uint64_t>(full_sum), std::bit_cast<std::uint64_t>(coarse_sum));
    left_unsorted += std::is_sorted(coarse.begin(), coarse.end()) ? 0U : 1U;
    QuantileSketch from_full, from_coarse;
    from_full.add_sorted(full);
    from_coarse.add_sorted(coarse);
    ASSERT_EQ(from_full.count(), from_coarse.count()) << c;
    for (double q = 0; q <= 1.0; q += 0.001) {
      EXPECT_EQ(from_full.quantile(q), from_coarse.quantile(q)) << "case " << c << " q " << q;
    }
  }
  EXPECT_GE(left_unsorted, 2U);  // the noisy cases were sorted only as far as needed
}

TEST(QuantileSorted, InterpolatesAndClamps) {
  const std::vector<double> sorted = {10, 20, 30, 40};
  EXPECT_DOUBLE_EQ(quantile_sorted(sorted, 0.25), 17.5);  // position 0.75
  EXPECT_DOUBLE_EQ(quantile_sorted(sorted, 0.5), 25);
  EXPECT_EQ(quantile_sorted(sorted, 0), 10);
  EXPECT_EQ(quantile_sorted(sorted, 1), 40);
  EXPECT_EQ(quantile_sorted(sorted, -0.5), 10);
  EXPECT_EQ(quantile_sorted(sorted, 1.5), 40);
  EXPECT_TRUE(std::isnan(quantile_sorted(sorted, kNaN)));
  EXPECT_TRUE(std::isnan(quantile_sorted({}, 0.5)));
}

TEST(RunningStats, MatchesExactValues) {
  // {2, 4, 4, 4, 5, 5, 7, 9}: mean 5, squared deviations 9+1+1+1+0+0+4+16 = 32,
  // population variance 32 / 8 = 4.
  RunningStats stats;
  for (double value : {2.0, 4.0, kNaN, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0}) stats.add(value);
  EXPECT_EQ(stats.count(), 8u);
  EXPECT_DOUBLE_EQ(stats.mean(), 5);
  EXPECT_DOUBLE_EQ(stats.variance(), 4);
  EXPECT_DOUBLE_EQ(stats.stddev(), 2);
  EXPECT_EQ(stats.min(), 2);
  EXPECT_EQ(stats.max(), 9);
}

TEST(RunningStats, StableFarFromZero) {
  // The same spread around 1e9: a naive Σx² − (Σx)²/n loses every digit here.
  RunningStats stats;
  for (double value : {2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0}) stats.add(1e9 + value);
  EXPECT_NEAR(stats.variance(), 4, 1e-6);
  EXPECT_DOUBLE_EQ(stats.mean(), 1e9 + 5);
}

TEST(RunningStats, MergeEqualsOnePass) {
  RunningStats whole, left, right, empty;
  for (int i = 0; i < 100; ++i) {
    const double value = std::sin(i) * 10 + i * 0.1;
    whole.add(value);
    (i < 37 ? left : right).add(value);
  }
  left.merge(empty);
  left.merge(right);
  EXPECT_EQ(left.count(), whole.count());
  EXPECT_NEAR(left.mean(), whole.mean(), 1e-12);
  EXPECT_NEAR(left.variance(), whole.variance(), 1e-10);
  EXPECT_EQ(left.min(), whole.min());
  EXPECT_EQ(left.max(), whole.max());

  empty.merge(whole);
  EXPECT_EQ(empty.count(), whole.count());
  EXPECT_EQ(empty.mean(), whole.mean());
}

TEST(RunningStats, EmptyAndSingleReadZeroSpread) {
  RunningStats stats;
  EXPECT_EQ(stats.count(), 0u);
  EXPECT_EQ(stats.variance(), 0);
  stats.add(3);
  EXPECT_EQ(stats.variance(), 0);
  EXPECT_EQ(stats.min(), 3);
  EXPECT_EQ(stats.max(), 3);
}

}  // namespace
}  // namespace gpuscope::analyze
