#include "analyze/energy.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace gpuscope::analyze {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInfinity = std::numeric_limits<double>::infinity();

TEST(CounterEnergy, SumsIncreasesAcrossAReset) {
  // +2000, +2000, reset (interval left out), +2000, +2000 mJ: 8 J over 5 s.
  const std::vector<double> t = {0, 1, 2, 3, 4, 5};
  const std::vector<double> counter = {1000, 3000, 5000, 500, 2500, 4500};
  const auto energy = counter_energy(t, counter);
  ASSERT_TRUE(energy);
  EXPECT_DOUBLE_EQ(energy->joules, 8);
  EXPECT_EQ(energy->resets, 1u);
  EXPECT_DOUBLE_EQ(energy->covered_s, 5);
}

TEST(CounterEnergy, SkipsNaNsAndBridgesGaps) {
  // The counter kept counting through the missing reading: 6000 mJ over 0..3 s.
  const std::vector<double> t = {0, 1, 2, 3, kNaN};
  const std::vector<double> counter = {0, kNaN, 4000, 6000, 9000};
  const auto energy = counter_energy(t, counter);
  ASSERT_TRUE(energy);
  EXPECT_DOUBLE_EQ(energy->joules, 6);
  EXPECT_EQ(energy->resets, 0u);
  EXPECT_DOUBLE_EQ(energy->covered_s, 3);
}

TEST(CounterEnergy, FewerThanTwoReadingsIsNullopt) {
  EXPECT_FALSE(counter_energy({}, {}));
  const std::vector<double> t = {0, 1};
  const std::vector<double> one = {kNaN, 5};
  EXPECT_FALSE(counter_energy(t, one));
}

TEST(IntegratePower, Triangle) {
  // Rising to 200 W at 2 s and back to 0 at 4 s: ½ · 4 s · 200 W = 400 J.
  const std::vector<double> t = {0, 1, 2, 3, 4};
  const std::vector<double> power = {0, 100, 200, 100, 0};
  EXPECT_DOUBLE_EQ(integrate_power(t, power, 1.5), 400);
}

TEST(IntegratePower, ConstantWithAGap) {
  // 50 W; the 8 s between 2 s and 10 s is a gap: 0..2 and 10..11 count, 150 J.
  const std::vector<double> t = {0, 1, 2, 10, 11};
  const std::vector<double> power = {50, 50, 50, 50, 50};
  EXPECT_DOUBLE_EQ(integrate_power(t, power, 2), 150);
  EXPECT_DOUBLE_EQ(integrate_power(t, power, kInfinity), 550);
  EXPECT_DOUBLE_EQ(integrate_power(t, power, 0), 0);
}

TEST(IntegratePower, NaNReadingsAreSkipped) {
  // The readings either side of the NaN are 2 s apart: bridged under a 5 s limit, not 1.5 s.
  const std::vector<double> t = {0, 1, 2};
  const std::vector<double> power = {100, kNaN, 300};
  EXPECT_DOUBLE_EQ(integrate_power(t, power, 5), 400);
  EXPECT_DOUBLE_EQ(integrate_power(t, power, 1.5), 0);
  EXPECT_EQ(integrate_power({}, {}, 1), 0);
}

std::size_t reason(std::string_view name) {
  for (std::size_t i = 0; i < kThrottleReasonCount; ++i) {
    if (kThrottleReasonNames[i] == name) return i;
  }
  ADD_FAILURE() << "no reason " << name;
  return 0;
}

TEST(ThrottleTime, OverlappingReasonsAndIdleIgnored) {
  // Each reading holds 1 s; the last (power brake at 5 s) is not extended.
  //   0 s power cap · 1 s power cap + SW thermal · 2 s GPU idle only ·
  //   3 s HW slowdown + HW thermal · 4 s nothing · 5 s power brake.
  const std::vector<double> t = {0, 1, 2, 3, 4, 5};
  const std::vector<double> reasons = {0x4, 0x4 | 0x20, 0x1, 0x8 | 0x40, 0x0, 0x80};
  const ThrottleTime time = throttle_time(t, reasons, 2);
  EXPECT_DOUBLE_EQ(time.observed_s, 5);
  EXPECT_DOUBLE_EQ(time.any_s, 3);
  EXPECT_DOUBLE_EQ(time.seconds[reason("power cap")], 2);
  EXPECT_DOUBLE_EQ(time.seconds[reason("thermal")], 2);
  EXPECT_DOUBLE_EQ(time.seconds[reason("HW slowdown")], 1);
  EXPECT_EQ(time.seconds[reason("power brake")], 0);
  EXPECT_EQ(time.seconds[reason("sync boost")], 0);
  EXPECT_EQ(time.seconds[reason("application clocks")], 0);
}

TEST(ThrottleTime, SyncBoostAndApplicationClocks) {
  const std::vector<double> t = {0, 0.5, 1.5};
  const std::vector<double> reasons = {0x10, 0x2 | 0x1, 0x10};
  const ThrottleTime time = throttle_time(t, reasons, 5);
  EXPECT_DOUBLE_EQ(time.seconds[reason("sync boost")], 0.5);
  EXPECT_DOUBLE_EQ(time.seconds[reason("application clocks")], 1.0);
  EXPECT_DOUBLE_EQ(time.any_s, 1.5);
}

TEST(ThrottleTime, GapsAndMissingReadingsUnobserved) {
  // 0→1 s counted; 1→5 s is a gap past the 2 s limit.
  const std::vector<double> t = {0, 1, 5};
  const std::vector<double> capped = {0x4, 0x4, 0x4};
  ThrottleTime time = throttle_time(t, capped, 2);
  EXPECT_DOUBLE_EQ(time.observed_s, 1);
  EXPECT_DOUBLE_EQ(time.seconds[reason("power cap")], 1);

  // A NaN reading leaves its interval unobserved.
  const std::vector<double> t2 = {0, 1, 2};
  const std::vector<double> missing = {0x4, kNaN, 0x4};
  time = throttle_time(t2, missing, 2);
  EXPECT_DOUBLE_EQ(time.observed_s, 1);
  EXPECT_DOUBLE_EQ(time.any_s, 1);
}

}  // namespace
}  // namespace gpuscope::analyze

namespace gpuscope::analyze {
namespace {

// The interval join: the counter's energy split at interval edges, by hand.
TEST(CounterEnergyIn, SplitsAtEdgesInProportionToTime) {
  const std::vector<double> t{0, 10, 20};
  const std::vector<double> mj{0, 1000, 3000};  // 100 mW, then 200 mW
  // [5, 15): half of the first reading interval (0.5 J) and half of the second (1 J).
  const auto e = counter_energy_in(t, mj, std::vector<double>{0, 5, 15, 20});
  ASSERT_EQ(e.size(), 3U);
  EXPECT_DOUBLE_EQ(e[0], 0.5);
  EXPECT_DOUBLE_EQ(e[1], 1.5);
  EXPECT_DOUBLE_EQ(e[2], 1.0);
}

TEST(CounterEnergyIn, SumsToTheCounterEnergyAndNeverExtrapolates) {
  const std::vector<double> t{1, 2, 3, 4};
  const std::vector<double> mj{100, 400, 900, 1000};
  const auto e = counter_energy_in(t, mj, std::vector<double>{-100, 2.5, 1e9});
  ASSERT_EQ(e.size(), 2U);
  EXPECT_DOUBLE_EQ(e[0], 0.3 + 0.25);  // all of [1, 2) and half of [2, 3)
  EXPECT_DOUBLE_EQ(e[1], 0.25 + 0.1);
  EXPECT_DOUBLE_EQ(e[0] + e[1], counter_energy(t, mj)->joules);
  // Wholly before or after the readings: nothing is known, so nothing is counted.
  const auto outside = counter_energy_in(t, mj, std::vector<double>{-10, -5, 0, 1});
  EXPECT_EQ(outside, (std::vector<double>{0, 0, 0}));
}

TEST(CounterEnergyIn, AResetsIntervalIsLeftOutAsCounterEnergyDoes) {
  const std::vector<double> t{0, 1, 2, 3};
  const std::vector<double> mj{0, 1000, 200, 1200};  // the driver reloaded between 1 and 2
  const auto e = counter_energy_in(t, mj, std::vector<double>{0, 1.5, 3});
  ASSERT_EQ(e.size(), 2U);
  EXPECT_DOUBLE_EQ(e[0], 1.0);
  EXPECT_DOUBLE_EQ(e[1], 1.0);
  EXPECT_DOUBLE_EQ(e[0] + e[1], counter_energy(t, mj)->joules);
}

TEST(CounterEnergyIn, NaNReadingsAreSkippedAndTooFewGiveZeros) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto e = counter_energy_in(std::vector<double>{0, 1, 2}, std::vector<double>{0, nan, 2000},
                                   std::vector<double>{0, 1, 2});
  EXPECT_EQ(e, (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(
      counter_energy_in(std::vector<double>{0}, std::vector<double>{5}, std::vector<double>{0, 1}),
      std::vector<double>{0});
  EXPECT_TRUE(counter_energy_in(std::vector<double>{0, 1}, std::vector<double>{0, 1},
                                std::vector<double>{0})
                  .empty());
}

}  // namespace
}  // namespace gpuscope::analyze
