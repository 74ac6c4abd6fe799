// Noise is a pure function of its keys, so scenario runs reproduce bucket for bucket.
#include "sim/noise.hpp"

#include <cmath>

#include "sim/gpu_model.hpp"
#include "test_support.hpp"

namespace gpuscope::sim {
namespace {

TEST(Noise, IsAPureFunctionOfItsKeys) {
  EXPECT_EQ(standard_noise(7, 1, 42, 3), standard_noise(7, 1, 42, 3));
  EXPECT_NE(standard_noise(7, 1, 42, 3), standard_noise(8, 1, 42, 3));
  EXPECT_NE(standard_noise(7, 1, 42, 3), standard_noise(7, 2, 42, 3));
  EXPECT_NE(standard_noise(7, 1, 42, 3), standard_noise(7, 1, 43, 3));
  EXPECT_NE(standard_noise(7, 1, 42, 3), standard_noise(7, 1, 42, 4));
}

TEST(Noise, HasZeroMeanUnitSpreadAndBoundedTails) {
  constexpr int kSamples = 100000;
  double sum = 0;
  double sum_squares = 0;
  double largest = 0;
  for (int i = 0; i < kSamples; ++i) {
    const double z = standard_noise(99, 0, static_cast<std::uint64_t>(i), 0);
    sum += z;
    sum_squares += z * z;
    largest = std::max(largest, std::abs(z));
  }
  const double mean = sum / kSamples;
  EXPECT_NEAR(mean, 0.0, 0.02);
  EXPECT_NEAR(std::sqrt(sum_squares / kSamples - mean * mean), 1.0, 0.02);
  EXPECT_LE(largest, 3.47);  // the sum of four uniforms cannot go further
}

TEST(Noise, TwoRunsOfAScenarioGiveIdenticalBuckets) {
  const Scenario scenario = testing::must_load(testing::shipped_scenario("h100x4-straggler"));
  for (std::size_t gpu = 0; gpu < scenario.gpus.size(); ++gpu) {
    GpuModel first(scenario.gpus[gpu], scenario.seed, gpu);
    GpuModel second(scenario.gpus[gpu], scenario.seed, gpu);
    for (std::int64_t bucket = 0; bucket < 300; ++bucket) {
      first.advance_to(bucket * kBucketNs + 5);
      second.advance_to(bucket * kBucketNs + 5);
      ASSERT_EQ(first.bucket().levels, second.bucket().levels)
          << "gpu " << gpu << " bucket " << bucket;
      ASSERT_EQ(first.bucket().power_mw, second.bucket().power_mw);
    }
  }
}

TEST(Noise, DifferentSeedsOrGpusGiveDifferentBuckets) {
  const Scenario scenario = testing::must_load(testing::shipped_scenario("h100"));
  GpuModel base(scenario.gpus[0], scenario.seed, 0);
  GpuModel other_seed(scenario.gpus[0], scenario.seed + 1, 0);
  GpuModel other_gpu(scenario.gpus[0], scenario.seed, 1);
  const std::int64_t in_compute = 30 * 1'000'000'000LL;
  base.advance_to(in_compute);
  other_seed.advance_to(in_compute);
  other_gpu.advance_to(in_compute);
  EXPECT_NE(base.bucket().power_mw, other_seed.bucket().power_mw);
  EXPECT_NE(base.bucket().power_mw, other_gpu.bucket().power_mw);
  // Noise wobbles the levels around the phase's, it does not move them.
  const double sm_active = base.bucket().levels[index_of(Activity::SmActive)];
  EXPECT_NEAR(sm_active, 92.0, 92.0 * 0.03 * 3.5);
  EXPECT_NE(sm_active, 92.0);
}

TEST(Noise, QueryingOftenOrRarelyGivesTheSameState) {
  const Scenario scenario = testing::must_load(testing::shipped_scenario("h100"));
  GpuModel stepped(scenario.gpus[0], scenario.seed, 0);
  GpuModel jumped(scenario.gpus[0], scenario.seed, 0);
  for (std::int64_t t = 0; t <= 40'000'000'000; t += 37'000'000) stepped.advance_to(t);
  jumped.advance_to(stepped.time_ns());
  EXPECT_EQ(stepped.energy_uj(), jumped.energy_uj());
  EXPECT_EQ(stepped.bucket().levels, jumped.bucket().levels);
  EXPECT_DOUBLE_EQ(stepped.work_done_s(), jumped.work_done_s());
}

}  // namespace
}  // namespace gpuscope::sim
