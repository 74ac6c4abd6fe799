#include "analyze/balance.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace gpuscope::analyze {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(LoadBalance, OneStraggler) {
  // Median 0.8, mean 0.7; GPU 2 is 50 % below the median for 100 s: 50 GPU-seconds lost.
  // Deviations from the mean 0.1, 0.1, −0.3, 0.1: variance 0.12 / 4 = 0.03.
  const std::vector<double> activity = {0.8, 0.8, 0.4, 0.8};
  const std::vector<double> duration = {100, 100, 100, 100};
  const Balance balance = load_balance(activity, duration);
  EXPECT_EQ(balance.count, 4u);
  EXPECT_DOUBLE_EQ(balance.mean, 0.7);
  EXPECT_DOUBLE_EQ(balance.median, 0.8);
  EXPECT_NEAR(balance.max_over_mean, 0.8 / 0.7, 1e-12);
  EXPECT_NEAR(balance.cv, std::sqrt(0.03) / 0.7, 1e-12);
  ASSERT_EQ(balance.stragglers.size(), 1u);
  EXPECT_EQ(balance.stragglers[0].index, 2u);
  EXPECT_NEAR(balance.stragglers[0].below_median, 0.5, 1e-12);
  EXPECT_NEAR(balance.stragglers[0].gpu_seconds_lost, 50, 1e-9);
}

TEST(LoadBalance, PerfectlyBalanced) {
  const std::vector<double> activity = {0.6, 0.6, 0.6};
  const std::vector<double> duration = {10, 10, 10};
  const Balance balance = load_balance(activity, duration);
  EXPECT_EQ(balance.cv, 0);
  EXPECT_DOUBLE_EQ(balance.max_over_mean, 1);
  EXPECT_TRUE(balance.stragglers.empty());
}

TEST(LoadBalance, NaNIgnoredAndThresholdRespected) {
  // Known: 0.9, 0.9, 0.6, 0.78. Median (0.78 + 0.9) / 2 = 0.84.
  // GPU 3: 1 − 0.6 / 0.84 = 0.285714 below, 60 s → 17.142857 GPU-s.
  // GPU 4: 1 − 0.78 / 0.84 = 0.0714 below: within the 15 % threshold.
  const std::vector<double> activity = {0.9, kNaN, 0.9, 0.6, 0.78};
  const std::vector<double> duration = {60, 60, 60, 60, 60};
  const Balance balance = load_balance(activity, duration);
  EXPECT_EQ(balance.count, 4u);
  EXPECT_DOUBLE_EQ(balance.median, 0.84);
  EXPECT_DOUBLE_EQ(balance.mean, (0.9 + 0.9 + 0.6 + 0.78) / 4);
  ASSERT_EQ(balance.stragglers.size(), 1u);
  EXPECT_EQ(balance.stragglers[0].index, 3u);
  EXPECT_NEAR(balance.stragglers[0].below_median, 1 - 0.6 / 0.84, 1e-12);
  EXPECT_NEAR(balance.stragglers[0].gpu_seconds_lost, 60 * (1 - 0.6 / 0.84), 1e-9);

  // A lower threshold catches GPU 4 too.
  EXPECT_EQ(load_balance(activity, duration, 0.05).stragglers.size(), 2u);
}

TEST(LoadBalance, StragglersMostLostFirst) {
  // Median 0.8. GPU 0: 50 % below for 10 s = 5; GPU 1: 25 % below for 100 s = 25;
  // GPU 4: 75 % below with no duration: loss unknown, listed last.
  const std::vector<double> activity = {0.4, 0.6, 0.8, 0.8, 0.2, 0.8, 0.8};
  const std::vector<double> duration = {10, 100, 100, 100, kNaN, 100, 100};
  const Balance balance = load_balance(activity, duration);
  ASSERT_EQ(balance.stragglers.size(), 3u);
  EXPECT_EQ(balance.stragglers[0].index, 1u);
  EXPECT_NEAR(balance.stragglers[0].gpu_seconds_lost, 25, 1e-9);
  EXPECT_EQ(balance.stragglers[1].index, 0u);
  EXPECT_NEAR(balance.stragglers[1].gpu_seconds_lost, 5, 1e-9);
  EXPECT_EQ(balance.stragglers[2].index, 4u);
  EXPECT_TRUE(std::isnan(balance.stragglers[2].gpu_seconds_lost));
  EXPECT_NEAR(balance.stragglers[2].below_median, 0.75, 1e-12);
}

TEST(LoadBalance, EmptyIdleAndShortDurations) {
  const Balance empty = load_balance({}, {});
  EXPECT_EQ(empty.count, 0u);
  EXPECT_TRUE(empty.stragglers.empty());

  const std::vector<double> idle = {0, 0, 0};
  const Balance all_idle = load_balance(idle, {});
  EXPECT_EQ(all_idle.max_over_mean, 1);
  EXPECT_EQ(all_idle.cv, 0);
  EXPECT_TRUE(all_idle.stragglers.empty());

  // Durations shorter than the activities: the GPU past the end has an unknown loss.
  const std::vector<double> activity = {0.9, 0.9, 0.3};
  const std::vector<double> duration = {30, 30};
  const Balance short_durations = load_balance(activity, duration);
  ASSERT_EQ(short_durations.stragglers.size(), 1u);
  EXPECT_TRUE(std::isnan(short_durations.stragglers[0].gpu_seconds_lost));
}

}  // namespace
}  // namespace gpuscope::analyze
