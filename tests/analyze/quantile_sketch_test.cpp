#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "analyze/stats.hpp"

namespace gpuscope::analyze {
namespace {

const std::vector<double> kQuantiles = {0,    0.001, 0.01, 0.05,  0.25, 0.5,
                                        0.75, 0.95,  0.99, 0.999, 1};

// Heavy-tailed positive data: log-normal with a wide spread, plus a cluster of equal values.
std::vector<double> skewed_values(std::size_t n, unsigned seed) {
  std::mt19937_64 generator(seed);
  std::lognormal_distribution<double> distribution(0.0, 2.5);
  std::vector<double> values(n);
  for (double& value : values) value = distribution(generator);
  for (std::size_t i = 0; i < n / 10; ++i) values[i] = 42.0;
  return values;
}

// The documented bound: a·((1 − f)|x_lo| + f|x_hi|) around the interpolated quantile, which is
// a·|quantile| when both order statistics have the same sign.
void expect_within_accuracy(const QuantileSketch& sketch, std::vector<double> values,
                            double accuracy) {
  std::sort(values.begin(), values.end());
  ASSERT_EQ(sketch.count(), values.size());
  for (double q : kQuantiles) {
    const double position = q * static_cast<double>(values.size() - 1);
    const auto lower = static_cast<std::size_t>(position);
    const std::size_t upper = std::min(lower + 1, values.size() - 1);
    const double fraction = position - static_cast<double>(lower);
    const double bound =
        accuracy * ((1 - fraction) * std::abs(values[lower]) + fraction * std::abs(values[upper]));
    const double exact = quantile_sorted(values, q);
    const auto estimate = sketch.quantile(q);
    ASSERT_TRUE(estimate);
    EXPECT_LE(std::abs(*estimate - exact), bound * (1 + 1e-9) + 1e-300)
        << "q = " << q << ", exact " << exact << ", estimate " << *estimate;
  }
}

TEST(QuantileSketch, SkewedDataWithinRelativeAccuracy) {
  for (double accuracy : {0.001, 0.01, 0.05}) {
    const auto values = skewed_values(20000, 7);
    QuantileSketch sketch(accuracy);
    for (double value : values) sketch.add(value);
    EXPECT_NEAR(sketch.relative_accuracy(), accuracy, 1e-12);
    expect_within_accuracy(sketch, values, accuracy);
  }
}

// add_sorted() files every value in the bucket add() would: identical quantiles, any data.
TEST(QuantileSketch, AddSortedEqualsAddingOneByOne) {
  std::mt19937_64 generator(5);
  std::normal_distribution<double> normal(0, 1e3);
  std::vector<std::vector<double>> cases = {skewed_values(20000, 3), {}, {0, 0, 0}};
  std::vector<double> mixed(20000);
  for (std::size_t i = 0; i < mixed.size(); ++i)
    mixed[i] = i % 7 == 0 ? 0 : (i % 11 == 0 ? 1e300 : std::round(normal(generator)) / 8);
  mixed[3] = std::numeric_limits<double>::infinity();
  mixed[4] = -std::numeric_limits<double>::infinity();
  cases.push_back(mixed);
  for (auto& values : cases) {
    QuantileSketch one_by_one, sorted_at_once;
    for (double v : values) one_by_one.add(v);
    std::sort(values.begin(), values.end());
    sorted_at_once.add(1.0);  // on top of what is there
    one_by_one.add(1.0);
    sorted_at_once.add_sorted(values);
    ASSERT_EQ(sorted_at_once.count(), one_by_one.count());
    EXPECT_EQ(sorted_at_once.bucket_count(), one_by_one.bucket_count());
    for (double q : kQuantiles) {
      EXPECT_EQ(sorted_at_once.quantile(q), one_by_one.quantile(q)) << q;
    }
  }
}

TEST(QuantileSketch, ExtremesAreExact) {
  const auto values = skewed_values(5000, 3);
  QuantileSketch sketch;
  for (double value : values) sketch.add(value);
  EXPECT_EQ(*sketch.quantile(0), *std::min_element(values.begin(), values.end()));
  EXPECT_EQ(*sketch.quantile(1), *std::max_element(values.begin(), values.end()));
}

TEST(QuantileSketch, MergedSketchesWithinAccuracy) {
  const auto first = skewed_values(8000, 11);
  const auto second = skewed_values(12000, 12);
  QuantileSketch a(0.01), b(0.01), empty(0.01);
  for (double value : first) a.add(value);
  for (double value : second) b.add(value);
  a.merge(empty);
  a.merge(b);
  std::vector<double> all = first;
  all.insert(all.end(), second.begin(), second.end());
  expect_within_accuracy(a, all, 0.01);

  empty.merge(a);  // into an empty sketch: its extremes are taken over
  EXPECT_EQ(empty.quantile(0), a.quantile(0));
  EXPECT_EQ(empty.quantile(1), a.quantile(1));
}

TEST(QuantileSketch, MergeOfDifferentAccuraciesAddsTheErrors) {
  const auto first = skewed_values(3000, 21);
  const auto second = skewed_values(3000, 22);
  QuantileSketch coarse(0.02), fine(0.005);
  for (double value : first) coarse.add(value);
  for (double value : second) fine.add(value);
  coarse.merge(fine);
  std::vector<double> all = first;
  all.insert(all.end(), second.begin(), second.end());
  expect_within_accuracy(coarse, all, 0.02 + 0.005 + 0.02 * 0.005);
}

TEST(QuantileSketch, NegativesZerosAndPositives) {
  std::vector<double> values;
  for (int i = -500; i <= 1000; ++i) values.push_back(i * 0.37);
  for (int i = 0; i < 50; ++i) values.push_back(0.0);
  QuantileSketch sketch(0.01);
  for (double value : values) sketch.add(value);
  expect_within_accuracy(sketch, values, 0.01);
}

TEST(QuantileSketch, EmptyNaNAndSelfMerge) {
  QuantileSketch sketch;
  EXPECT_FALSE(sketch.quantile(0.5));
  sketch.add(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(sketch.count(), 0u);
  sketch.add(5);
  sketch.add(10);
  EXPECT_FALSE(sketch.quantile(std::numeric_limits<double>::quiet_NaN()));
  sketch.merge(sketch);
  EXPECT_EQ(sketch.count(), 4u);
  EXPECT_EQ(*sketch.quantile(0), 5);
  EXPECT_EQ(*sketch.quantile(1), 10);
}

TEST(QuantileSketch, MemoryFollowsTheLogSpan) {
  // Six decades at a = 0.001: ln(1e6) / ln(1.001 / 0.999) ≈ 6908 buckets, wherever they lie.
  QuantileSketch sketch;
  for (int i = 0; i <= 600000; ++i) sketch.add(1e6 * std::pow(10.0, -i / 100000.0));
  EXPECT_LE(sketch.bucket_count(), 6910u);
  EXPECT_GE(sketch.bucket_count(), 6900u);
  // A falling series grows the buckets downwards, with room of at most 1024 buckets, which
  // compact() gives back without changing a result.
  EXPECT_LE(sketch.held_buckets(), sketch.bucket_count() + 1024);
  const auto median = sketch.quantile(0.5);
  sketch.compact();
  EXPECT_EQ(sketch.held_buckets(), sketch.bucket_count());
  EXPECT_EQ(sketch.quantile(0.5), median);

  // A span far beyond the cap stays bounded, and the top of it stays accurate.
  QuantileSketch wide(0.001);
  std::vector<double> values;
  for (int exponent = -300; exponent <= 300; ++exponent) {
    for (int k = 1; k <= 9; ++k) values.push_back(k * std::pow(10.0, exponent));
  }
  for (double value : values) wide.add(value);
  EXPECT_LE(wide.bucket_count(), QuantileSketch::kMaxBuckets);
  std::sort(values.begin(), values.end());
  const double exact = quantile_sorted(values, 0.99);
  EXPECT_LE(std::abs(*wide.quantile(0.99) - exact), 0.001 * exact * (1 + 1e-9));
}

TEST(QuantileSketch, InfinitiesCountAsTheLargestDouble) {
  QuantileSketch sketch;
  sketch.add(std::numeric_limits<double>::infinity());
  sketch.add(-std::numeric_limits<double>::infinity());
  sketch.add(1e300);
  EXPECT_EQ(sketch.count(), 3u);
  EXPECT_EQ(*sketch.quantile(1), std::numeric_limits<double>::max());
  EXPECT_EQ(*sketch.quantile(0), std::numeric_limits<double>::lowest());
  EXPECT_NEAR(*sketch.quantile(0.5), 1e300, 1e297);
}

}  // namespace
}  // namespace gpuscope::analyze
