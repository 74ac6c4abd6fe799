// The per-GPU model: phases, energy, thermals, clocks and memory from the 100 ms buckets.
#include "sim/gpu_model.hpp"

#include <algorithm>
#include <cmath>

#include "nvml/abi.hpp"
#include "test_support.hpp"

namespace gpuscope::sim {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

class H100Model : public ::testing::Test {
 protected:
  Scenario scenario_ = testing::must_load(testing::shipped_scenario("h100"));
  GpuModel model_{scenario_.gpus[0], scenario_.seed, 0};
};

TEST_F(H100Model, EnergyCounterIsTheIntegralOfBucketPowerToTheMillijoule) {
  model_.advance_to(1 * kSecond);
  const unsigned long long start_mj = model_.energy_mj();
  const std::uint64_t start_uj = model_.energy_uj();
  std::uint64_t integral_uj = 0;
  for (std::int64_t bucket = 10; bucket < 300; ++bucket) {
    model_.advance_to(bucket * kBucketNs);
    ASSERT_EQ(model_.bucket().index, bucket);
    integral_uj += std::uint64_t{model_.bucket().power_mw} * 100U;  // mW * 0.1 s
  }
  model_.advance_to(300 * kBucketNs);
  EXPECT_EQ(model_.energy_uj() - start_uj, integral_uj);
  const auto delta_mj = static_cast<long long>(model_.energy_mj() - start_mj);
  EXPECT_LE(std::llabs(delta_mj - static_cast<long long>(integral_uj / 1000U)), 1);
}

TEST_F(H100Model, EnergyIncludesThePartOfTheCurrentBucket) {
  model_.advance_to(30 * kSecond);
  const std::uint64_t at_start = model_.energy_uj();
  const unsigned power_mw = model_.bucket().power_mw;
  model_.advance_to(30 * kSecond + kBucketNs / 4);
  EXPECT_EQ(model_.energy_uj() - at_start, std::uint64_t{power_mw} * 25U);
}

TEST_F(H100Model, EnergyCounterStartsFromALargeOffset) {
  // As if the driver had been loaded for days: only deltas are meaningful.
  EXPECT_GT(model_.energy_mj(), 2ULL * 86400ULL * 60ULL * 1000ULL);
}

TEST_F(H100Model, WalksThroughThePhasesAndStaysInTheLast) {
  model_.advance_to(kSecond);
  EXPECT_EQ(scenario_.gpus[0].phases[model_.bucket().phase].name, "idle");
  EXPECT_TRUE(model_.bucket().idle);
  EXPECT_EQ(model_.sm_clock_mhz(), 345U);
  EXPECT_NE(model_.clocks_event_reasons() & nvml::kClocksEventGpuIdle, 0U);
  EXPECT_LT(model_.bucket().power_mw, 75000U);

  model_.advance_to(30 * kSecond);
  EXPECT_EQ(scenario_.gpus[0].phases[model_.bucket().phase].name, "compute");
  EXPECT_FALSE(model_.bucket().idle);
  EXPECT_EQ(model_.sm_clock_mhz(), 1980U);
  EXPECT_EQ(model_.clocks_event_reasons(), 0U);
  EXPECT_NEAR(model_.power_average_mw(), 594000.0, 20000.0);

  model_.advance_to(600 * kSecond);
  EXPECT_EQ(model_.bucket().phase, scenario_.gpus[0].phases.size() - 1);
  EXPECT_TRUE(model_.bucket().idle);
}

TEST_F(H100Model, WarmupRampsLevelsAndMemory) {
  model_.advance_to(2 * kSecond + 5 * kBucketNs);
  const double early = model_.bucket().levels[index_of(Activity::SmActive)];
  const double early_memory = model_.bucket().memory_used_mib;
  model_.advance_to(4 * kSecond + 5 * kBucketNs);
  const double late = model_.bucket().levels[index_of(Activity::SmActive)];
  EXPECT_LT(early, 30.0);
  EXPECT_GT(late, 60.0);
  EXPECT_LT(early_memory, model_.bucket().memory_used_mib);
}

TEST_F(H100Model, TemperatureRisesTowardItsSteadyStateUnderLoad) {
  model_.advance_to(kSecond);
  const double idle = model_.bucket().temperature_c;
  EXPECT_NEAR(idle, 31.0, 1.0);
  model_.advance_to(60 * kSecond);
  const double hot = model_.bucket().temperature_c;
  // Steady state near 31 + 0.055 * (594 - 70) = 60 C; after two time constants most of the way.
  EXPECT_GT(hot, 50.0);
  EXPECT_LT(hot, 61.0);
}

TEST_F(H100Model, PowerUsageIsAOneSecondAverageOnHopper) {
  model_.advance_to(2 * kSecond + kBucketNs);  // just after the step from idle to warm-up
  EXPECT_LT(model_.power_average_mw(), model_.bucket().power_mw);
  EXPECT_EQ(model_.power_usage_mw(), model_.power_average_mw());
}

TEST(ThermalModel, AHotGpuSlowsDownAndSaysWhy) {
  const Scenario scenario = testing::must_parse(R"({
    "phases": [{"name": "compute", "duration_s": 100, "util": 100, "sm_active": 95,
                "tensor": 80, "dram": 60, "compute_bound": 1}],
    "gpus": [{"model": "H100-SXM5-80GB",
              "thermal": {"slowdown_c": 45, "hw_slowdown_c": 80, "tau_s": 5}}]})");
  GpuModel model(scenario.gpus[0], scenario.seed, 0);
  model.advance_to(kSecond);
  EXPECT_EQ(model.clocks_event_reasons() & nvml::kClocksEventSwThermalSlowdown, 0U);
  model.advance_to(40 * kSecond);
  EXPECT_GE(model.bucket().temperature_c, 45.0);
  EXPECT_NE(model.clocks_event_reasons() & nvml::kClocksEventSwThermalSlowdown, 0U);
  EXPECT_EQ(model.sm_clock_mhz(), static_cast<unsigned>(std::lround(1980 * 0.85)));
  // Work slows with the clock (compute_bound 1): less than 40 work-seconds in 40 s.
  EXPECT_LT(model.work_done_s(), 39.0);
}

TEST(A100Model, PowerUsageIsTheLatestBucketOnGa100) {
  const Scenario scenario = testing::must_load(testing::shipped_scenario("a100-nogpm"));
  GpuModel model(scenario.gpus[0], scenario.seed, 0);
  model.advance_to(2 * kSecond + 2 * kBucketNs);
  EXPECT_EQ(model.power_usage_mw(), model.bucket().power_mw);
  EXPECT_NE(model.power_usage_mw(), model.power_average_mw());
}

TEST(StragglerModel, ActivityScaleLowersLevelsAndPower) {
  const Scenario scenario = testing::must_load(testing::shipped_scenario("h100x4-straggler"));
  GpuModel fast(scenario.gpus[0], scenario.seed, 0);
  GpuModel slow(scenario.gpus[3], scenario.seed, 3);
  double fast_sm = 0, slow_sm = 0, fast_nvlink = 0, slow_nvlink = 0;
  for (std::int64_t bucket = 60; bucket < 600; ++bucket) {
    fast.advance_to(bucket * kBucketNs);
    slow.advance_to(bucket * kBucketNs);
    fast_sm += fast.bucket().levels[index_of(Activity::SmActive)];
    slow_sm += slow.bucket().levels[index_of(Activity::SmActive)];
    fast_nvlink = std::max(fast_nvlink, fast.bucket().levels[index_of(Activity::NvlinkTx)]);
    slow_nvlink = std::max(slow_nvlink, slow.bucket().levels[index_of(Activity::NvlinkTx)]);
  }
  // The straggler is ~43 % less active than it would be; the others have all-reduce bursts
  // (peak NVLink traffic) between compute phases.
  EXPECT_NEAR(slow.bucket().levels[index_of(Activity::SmActive)], 92 * 0.57, 92 * 0.57 * 0.12);
  EXPECT_GT(fast_nvlink, slow_nvlink);
  EXPECT_GT(fast_sm, slow_sm);
}

}  // namespace
}  // namespace gpuscope::sim
