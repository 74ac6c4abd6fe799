// The figures over all GPUs and time checked against exact arithmetic: medians of quantised
// metrics are exact (ValueCounts), the sketch is kept only where values are continuous, and the
// means are within 1 ulp of the exact mean (docs/analysis.md, docs/performance.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "analyze/analyzer.hpp"
#include "analyze/stats.hpp"

namespace gpuscope::analyze {
namespace {

// Splits `values` into `parts` pieces of uneven size, as GPUs give them.
std::vector<std::vector<double>> split(const std::vector<double>& values, std::size_t parts,
                                       unsigned seed) {
  std::mt19937 generator(seed);
  std::vector<std::vector<double>> out(parts);
  for (double v : values) out[generator() % parts].push_back(v);
  for (auto& part : out) std::sort(part.begin(), part.end());
  return out;
}

std::vector<double> sorted_copy(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values;
}

TEST(ValueCounts, QuantilesEqualQuantileSortedBitForBit) {
  // GPU utilisation as NVML gives it: integer percent, mostly 100 with a tail.
  std::mt19937 generator(7);
  std::vector<double> values;
  for (int i = 0; i < 100'000; ++i) {
    const auto r = generator() % 100;
    values.push_back(r < 70 ? 100.0 : static_cast<double>(generator() % 101));
  }
  ValueCounts counts;
  for (const auto& part : split(values, 13, 1)) counts.add_sorted(part);
  const auto all = sorted_copy(values);
  ASSERT_TRUE(counts.exact());
  EXPECT_EQ(counts.count(), values.size());
  EXPECT_LE(counts.distinct(), 101u);
  for (double q : {0.0, 0.001, 0.05, 0.25, 0.3, 0.5, 0.75, 0.95, 0.999, 1.0}) {
    EXPECT_EQ(counts.quantile(q), quantile_sorted(all, q)) << "q = " << q;
  }
}

TEST(ValueCounts, InterpolatesBetweenNeighbouringDistinctValues) {
  ValueCounts counts;
  const std::vector<double> a = {1, 1, 2};
  const std::vector<double> b = {3, 4, 4};
  counts.add_sorted(b);
  counts.add_sorted(a);
  // 1 1 2 3 4 4: the median is at position 2.5, between 2 and 3.
  EXPECT_EQ(counts.quantile(0.5), 2.5);
  EXPECT_EQ(counts.quantile(0.0), 1.0);
  EXPECT_EQ(counts.quantile(1.0), 4.0);
  EXPECT_EQ(counts.quantile(0.2), 1.0);  // position 1: the second 1
  EXPECT_FALSE(counts.quantile(std::numeric_limits<double>::quiet_NaN()));
}

TEST(ValueCounts, NegativeZeroAndZeroAreOneValue) {
  ValueCounts counts(1);
  const std::vector<double> values = {-0.0, -0.0, 0.0};
  counts.add_sorted(values);
  EXPECT_TRUE(counts.exact());
  EXPECT_EQ(counts.distinct(), 1u);
  EXPECT_FALSE(std::signbit(*counts.quantile(0.5)));
}

TEST(ValueCounts, GivesUpPastTheLimitAndStaysGivenUp) {
  ValueCounts counts(100);
  std::vector<double> first(100);
  for (std::size_t i = 0; i < first.size(); ++i) first[i] = static_cast<double>(i);
  counts.add_sorted(first);
  EXPECT_TRUE(counts.exact());
  const std::vector<double> one_more = {1000};
  counts.add_sorted(one_more);  // the 101st distinct value, arriving in a merge
  EXPECT_FALSE(counts.exact());
  EXPECT_EQ(counts.distinct(), 0u);  // its memory is freed
  EXPECT_FALSE(counts.quantile(0.5));
  EXPECT_EQ(counts.count(), 101u);  // still counted
  ValueCounts other(100);
  const std::vector<double> few = {1, 2};
  other.add_sorted(few);
  other.merge(counts);
  EXPECT_FALSE(other.exact());
  EXPECT_EQ(other.count(), 103u);
  // One part alone past the limit.
  ValueCounts alone(10);
  alone.add_sorted(first);
  EXPECT_FALSE(alone.exact());
}

// The case: GPU utilisation over all GPUs and time where every value around the median
// is 100. The sketch said 99.98; the exact count says 100.
TEST(OverallPart, IntegerMetricMedianIsExact) {
  std::vector<OverallPart> gpus(8);
  std::vector<double> all;
  std::mt19937 generator(3);
  for (std::size_t g = 0; g < gpus.size(); ++g) {
    std::vector<double> values;
    for (int i = 0; i < 5000; ++i) {
      values.push_back(generator() % 10 < 8 ? 100.0 : static_cast<double>(generator() % 100));
    }
    std::sort(values.begin(), values.end());
    double sum = 0;
    for (double v : values) sum += v;
    gpus[g].add_sorted(values, sum);
    all.insert(all.end(), values.begin(), values.end());
  }
  OverallPart total;
  for (const auto& g : gpus) total.merge(g);
  const auto result = total.result();
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->median_exact);
  EXPECT_EQ(result->median, 100.0);
  EXPECT_EQ(result->median, quantile_sorted(sorted_copy(all), 0.5));
  // What the sketch alone would have said: within 0.1 %, but not 100.
  const double sketched = *total.sketch.quantile(0.5);
  EXPECT_NE(sketched, 100.0);
  EXPECT_NEAR(sketched, 100.0, 0.1);
}

TEST(OverallPart, ContinuousMetricFallsBackToTheSketch) {
  std::mt19937_64 generator(11);
  std::lognormal_distribution<double> power(5.5, 0.3);
  OverallPart total;
  std::vector<double> all;
  for (int g = 0; g < 4; ++g) {
    std::vector<double> values(20'000);
    for (double& v : values) v = power(generator);
    std::sort(values.begin(), values.end());
    double sum = 0;
    for (double v : values) sum += v;
    OverallPart part;
    part.add_sorted(values, sum);
    total.merge(part);
    all.insert(all.end(), values.begin(), values.end());
  }
  const auto result = total.result();
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->median_exact);
  const double exact = quantile_sorted(sorted_copy(all), 0.5);
  EXPECT_NEAR(result->median, exact, 0.001 * exact);
}

// ---- Means within 1 ulp of the exact mean ----
//
// Dyadic values k·2⁻¹⁰ with integer k: their sum is exactly an integer S times 2⁻¹⁰, held in
// 128 bits, and the exact mean is S/(n·2¹⁰). A double m = M·2^e (M an integer below 2⁵³) is
// within `ulps` ulp of it when |M·2^e·n·2¹⁰ − S| ≤ ulps·2^e·n·2¹⁰, all in exact integers.

__extension__ typedef __int128 Wide;

// How many ulps of `m` separate it from S/(n·2¹⁰), as a double; exact integer arithmetic.
double ulps_from_exact(double m, Wide sum_k, std::uint64_t n) {
  int exponent = 0;
  const double fraction =
      std::frexp(m, &exponent);  // m = fraction·2^exponent, |fraction| in [0.5, 1)
  const auto mantissa = static_cast<std::int64_t>(std::ldexp(fraction, 53));
  const int e = exponent - 53;  // m = mantissa·2^e exactly
  // Compare mantissa·2^(e+10)·n with sum_k, scaling whichever side has the negative power.
  Wide left = static_cast<Wide>(mantissa) * static_cast<Wide>(n);
  Wide right = sum_k;
  const int shift = e + 10;
  if (shift >= 0) {
    left <<= shift;
  } else {
    right <<= -shift;
  }
  Wide difference = left - right;
  if (difference < 0) difference = -difference;
  // One ulp of m is 2^e; on the scaled axis it is n·2^(e+10) → n (left side) or n (right side
  // scaled the same way): the ulp count is difference / (n·2^max(shift, 0)).
  Wide ulp = static_cast<Wide>(n);
  if (shift >= 0) ulp <<= shift;
  return static_cast<double>(difference) / static_cast<double>(ulp);
}

struct Dyadic {
  std::vector<double> values;
  Wide sum_k = 0;
};

// Values of very different sizes (the hard case for summation): k from 1 to 2⁵⁰.
Dyadic dyadic_values(std::size_t n, unsigned seed) {
  std::mt19937_64 generator(seed);
  Dyadic d;
  for (std::size_t i = 0; i < n; ++i) {
    const int bits = static_cast<int>(generator() % 50) + 1;
    const std::int64_t k = static_cast<std::int64_t>(generator() >> (64 - bits)) + 1;
    d.values.push_back(std::ldexp(static_cast<double>(k), -10));
    d.sum_k += k;
  }
  return d;
}

TEST(MeanAccuracy, PerGpuMeansAreWithinOneUlpOfTheExactMean) {
  int off_by_some = 0;
  for (unsigned seed = 0; seed < 200; ++seed) {
    const auto d = dyadic_values(1000 + seed * 37, seed);
    const auto summary = summarize(d.values);
    ASSERT_TRUE(summary);
    const double ulps = ulps_from_exact(summary->mean, d.sum_k, d.values.size());
    EXPECT_LE(ulps, 1.0) << "seed " << seed;
    if (ulps > 0.5) ++off_by_some;
  }
  // Not claimed correctly rounded: the ones past half an ulp are the reason for "within 1 ulp".
  RecordProperty("not_correctly_rounded_of_200", off_by_some);
}

TEST(MeanAccuracy, OverBothMeansAreWithinOneUlpOfTheExactMean) {
  for (unsigned seed = 0; seed < 100; ++seed) {
    const auto d = dyadic_values(20'000, 1000 + seed);
    OverallPart total;
    for (const auto& part : split(d.values, 1 + seed % 16, seed)) {
      if (part.empty()) continue;
      std::vector<double> sorted;
      double sum = 0;
      ASSERT_TRUE(summarize(part, sorted, sum));
      OverallPart gpu;
      gpu.add_sorted(sorted, sum);
      total.merge(gpu);
    }
    const auto result = total.result();
    ASSERT_TRUE(result);
    EXPECT_LE(ulps_from_exact(result->mean, d.sum_k, d.values.size()), 1.0) << "seed " << seed;
  }
}

}  // namespace
}  // namespace gpuscope::analyze
