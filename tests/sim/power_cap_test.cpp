// Power capping: power stays under the cap, clocks drop, and compute phases stretch.
#include "nvml/abi.hpp"
#include "sim/gpu_model.hpp"
#include "sim/power_model.hpp"
#include "test_support.hpp"

namespace gpuscope::sim {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

class PowerCap : public ::testing::Test {
 protected:
  // When the model first enters the phase named name, in scenario seconds (-1 if never).
  static double entry_time_s(GpuModel& model, const std::string& name, double limit_s) {
    for (std::int64_t bucket = 0; static_cast<double>(bucket) * kBucketSeconds < limit_s;
         ++bucket) {
      model.advance_to(bucket * kBucketNs);
      if (model.config().phases[model.bucket().phase].name == name) {
        return static_cast<double>(bucket) * kBucketSeconds;
      }
    }
    return -1;
  }

  Scenario scenario_ = testing::must_load(testing::shipped_scenario("h100"));
  const GpuConfig& gpu_ = scenario_.gpus[0];
};

TEST_F(PowerCap, PowerNeverExceedsTheCapByMoreThanOnePercent) {
  constexpr unsigned kCapMw = 300000;
  GpuModel model(gpu_, scenario_.seed, 0, kCapMw);
  int bound_buckets = 0;
  for (std::int64_t bucket = 0; bucket < 900; ++bucket) {
    model.advance_to(bucket * kBucketNs);
    ASSERT_LE(model.bucket().power_mw, kCapMw * 1.01) << "bucket " << bucket;
    if (model.bucket().cap_bound) {
      ++bound_buckets;
      EXPECT_NE(model.clocks_event_reasons() & nvml::kClocksEventSwPowerCap, 0U);
      EXPECT_LT(model.sm_clock_mhz(), 1980U);
      EXPECT_GT(model.bucket().power_mw, kCapMw * 0.98);
    }
  }
  EXPECT_GT(bound_buckets, 600);  // the whole compute phase
}

TEST_F(PowerCap, ALowerCapStretchesComputeAndLowersPower) {
  GpuModel uncapped(gpu_, scenario_.seed, 0);
  GpuModel capped(gpu_, scenario_.seed, 0, 300000);
  const double uncapped_tail = entry_time_s(uncapped, "tail", 200);
  const double capped_tail = entry_time_s(capped, "tail", 200);
  EXPECT_NEAR(uncapped_tail, 65.0, 0.15);  // 2 s idle + 3 s warm-up + 60 s compute
  const double speed = capped.steady_speed(300000);
  EXPECT_LT(speed, 0.85);
  // The warm-up ramp starts below the cap, so it is slowed less than the steady phase.
  EXPECT_GT(capped_tail, 5.0 + 60.0 / speed - 0.5);
  EXPECT_LT(capped_tail, 5.0 + 3.0 / speed + 60.0 / speed + 0.2);

  GpuModel a(gpu_, scenario_.seed, 0);
  GpuModel b(gpu_, scenario_.seed, 0, 300000);
  a.advance_to(30 * kSecond);
  b.advance_to(30 * kSecond);
  EXPECT_LT(b.power_average_mw(), a.power_average_mw() - 200000);
}

TEST_F(PowerCap, ProgressIsExactAcrossACapChange) {
  GpuModel model(gpu_, scenario_.seed, 0);
  model.advance_to(20 * kSecond - 1);
  model.set_power_limit(300000, 20 * kSecond);
  model.advance_to(30 * kSecond);
  // Uncapped, work runs at wall speed; from 20 s on, the steady phase runs at steady_speed.
  EXPECT_NEAR(model.work_done_s(), 20.0 + 10.0 * model.steady_speed(300000), 1e-6);
  EXPECT_EQ(model.power_limit_mw(), 300000U);
}

TEST_F(PowerCap, ALimitSetMidBucketBindsFromTheNextBucket) {
  GpuModel model(gpu_, scenario_.seed, 0);
  model.advance_to(30 * kSecond + kBucketNs / 2);
  model.set_power_limit(250000, 30 * kSecond + kBucketNs / 2);
  EXPECT_EQ(model.power_limit_mw(), 250000U);   // reported at once
  EXPECT_GT(model.bucket().power_mw, 400000U);  // the bucket already running is unchanged
  model.advance_to(30 * kSecond + kBucketNs);
  EXPECT_LE(model.bucket().power_mw, 252500U);
}

TEST(PowerModel, CapSpeedSolvesTheCubicLikeCurve) {
  // idle + (demand - idle) * s^k = cap
  const double s = cap_speed(300, 600, 70);
  EXPECT_NEAR(70 + (600 - 70) * std::pow(s, kPowerExponent), 300, 1e-9);
  EXPECT_EQ(cap_speed(700, 600, 70), 1.0);
  EXPECT_EQ(cap_speed(60, 600, 70), kMinSpeed);
  EXPECT_DOUBLE_EQ(work_rate(0.0, 0.5), 1.0);
  EXPECT_DOUBLE_EQ(work_rate(1.0, 0.5), 0.5);
}

TEST(PowerModel, DemandFollowsActivityOrThePhasePower) {
  const PowerSpec power{200, 700, 700, 70};
  Levels idle{};
  EXPECT_DOUBLE_EQ(demanded_power_w(power, idle, std::nullopt, 1.0), 70);
  Levels busy{};
  busy[index_of(Activity::SmActive)] = 100;
  busy[index_of(Activity::Tensor)] = 100;
  busy[index_of(Activity::Dram)] = 100;
  EXPECT_DOUBLE_EQ(demanded_power_w(power, busy, std::nullopt, 1.0), 700);
  EXPECT_DOUBLE_EQ(demanded_power_w(power, idle, 500.0, 0.5), 70 + (500 - 70) * 0.5);
}

}  // namespace
}  // namespace gpuscope::sim
