// Locked SM clocks: nvmlDeviceSetGpuLockedClocks / nvmlDeviceResetGpuLockedClocks on the driver
// (permission, range, state file) and their effect on the model (clock, power, stretched work).
#include <fstream>

#include "driver_harness.hpp"
#include "nvml/abi.hpp"
#include "sim/gpu_model.hpp"
#include "sim/power_model.hpp"

namespace gpuscope::sim {
namespace {

using testing::DriverHarness;
using ::testing::HasSubstr;
using testing::ManualClock;

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr LockedClocks kLock990{990, 990};  // half the H100's 1980 MHz

class LockedClockModel : public ::testing::Test {
 protected:
  Scenario scenario_ = testing::must_load(testing::shipped_scenario("h100"));
  const GpuConfig& gpu_ = scenario_.gpus[0];
};

TEST_F(LockedClockModel, ALockBelowTheBoostClockLowersClockAndPower) {
  GpuModel free(gpu_, scenario_.seed, 0);
  GpuModel locked(gpu_, scenario_.seed, 0, 0, kLock990);
  free.advance_to(30 * kSecond);
  locked.advance_to(30 * kSecond);
  EXPECT_EQ(free.sm_clock_mhz(), 1980U);
  EXPECT_EQ(locked.sm_clock_mhz(), 990U);
  EXPECT_DOUBLE_EQ(locked.bucket().speed, 0.5);
  EXPECT_FALSE(locked.bucket().cap_bound);
  EXPECT_NE(locked.clocks_event_reasons() & nvml::kClocksEventApplicationsClocksSetting, 0U);
  EXPECT_EQ(locked.clocks_event_reasons() & nvml::kClocksEventSwPowerCap, 0U);
  EXPECT_EQ(free.clocks_event_reasons() & nvml::kClocksEventApplicationsClocksSetting, 0U);
  // Dynamic power scales as s^2.5: at s = 0.5 about 18 % of it remains.
  const double idle_mw = gpu_.spec.power.idle_w * 1000;
  const double ratio = (locked.bucket().power_mw - idle_mw) / (free.bucket().power_mw - idle_mw);
  EXPECT_NEAR(ratio, std::pow(0.5, kPowerExponent), 0.03);
}

TEST_F(LockedClockModel, ALockStretchesComputeBoundWorkInProportion) {
  GpuModel model(gpu_, scenario_.seed, 0, 0, kLock990);
  model.advance_to(20 * kSecond);
  const double at_20 = model.work_done_s();
  model.advance_to(30 * kSecond);
  // The steady compute phase (compute_bound 0.85) does 1 − 0.85 · (1 − 0.5) work-s per second.
  EXPECT_NEAR(model.work_done_s() - at_20, 10.0 * work_rate(0.85, 0.5), 1e-6);
  EXPECT_DOUBLE_EQ(model.steady_speed(700000, 990), work_rate(0.85, 0.5));
  EXPECT_DOUBLE_EQ(model.steady_speed(700000, 0), 1.0);
}

TEST_F(LockedClockModel, ALockAtTheBoostClockChangesNothing) {
  GpuModel free(gpu_, scenario_.seed, 0);
  GpuModel locked(gpu_, scenario_.seed, 0, 0, {1980, 1980});
  for (std::int64_t s = 1; s < 70; s += 7) {
    free.advance_to(s * kSecond);
    locked.advance_to(s * kSecond);
    EXPECT_EQ(locked.bucket().power_mw, free.bucket().power_mw) << s;
    EXPECT_EQ(locked.work_done_s(), free.work_done_s()) << s;
  }
}

TEST_F(LockedClockModel, TheLowerOfCapAndLockWins) {
  // 300 W holds the clock near 0.72 of the maximum: a 990 MHz lock is lower and wins, a 1800 MHz
  // lock is higher and the cap still binds.
  GpuModel low(gpu_, scenario_.seed, 0, 300000, kLock990);
  GpuModel high(gpu_, scenario_.seed, 0, 300000, {1800, 1800});
  low.advance_to(30 * kSecond);
  high.advance_to(30 * kSecond);
  EXPECT_EQ(low.sm_clock_mhz(), 990U);
  EXPECT_FALSE(low.bucket().cap_bound);
  EXPECT_TRUE(high.bucket().cap_bound);
  EXPECT_LT(high.sm_clock_mhz(), 1800U);
  EXPECT_LT(low.bucket().power_mw, 250000U);
}

TEST_F(LockedClockModel, ALockSetMidRunBindsFromTheNextBucketAndAResetUndoesIt) {
  GpuModel model(gpu_, scenario_.seed, 0);
  model.advance_to(20 * kSecond - 1);
  model.set_locked_clocks(kLock990, 20 * kSecond);
  EXPECT_EQ(model.locked_clocks(), kLock990);  // reported at once
  model.advance_to(30 * kSecond - 1);
  model.set_locked_clocks({}, 30 * kSecond);
  model.advance_to(40 * kSecond);
  EXPECT_NEAR(model.work_done_s(), 20.0 + 10.0 * work_rate(0.85, 0.5) + 10.0, 1e-6);
  EXPECT_EQ(model.sm_clock_mhz(), 1980U);
}

TEST_F(LockedClockModel, ALockedMinimumKeepsAnIdleClockUp) {
  GpuModel model(gpu_, scenario_.seed, 0, 0, {1200, 1500});
  model.advance_to(kSecond);  // the first phase is idle
  ASSERT_TRUE(model.bucket().idle);
  EXPECT_EQ(model.sm_clock_mhz(), 1200U);
  EXPECT_EQ(model.clocks_event_reasons() & nvml::kClocksEventApplicationsClocksSetting, 0U);
}

TEST(LockedClockDriver, SetAndResetNeedPrivilege) {
  DriverHarness harness;
  DriverOptions options = harness.options(testing::shipped_scenario("h100"));
  options.privileged = false;
  ASSERT_EQ(harness.driver().init(options), nvml::kSuccess);
  EXPECT_EQ(DeviceSetGpuLockedClocks(harness.device(0), 990, 990), nvml::kErrorNoPermission);
  EXPECT_THAT(harness.driver().last_error(), HasSubstr("root"));
  EXPECT_EQ(DeviceResetGpuLockedClocks(harness.device(0)), nvml::kErrorNoPermission);
  std::ifstream state(harness.dir().file("state.json"));
  EXPECT_FALSE(state.good()) << "a refused call must not write the state file";
}

TEST(LockedClockDriver, ValuesOutsideTheSupportedRangeAreInvalid) {
  DriverHarness harness;
  harness.init(testing::shipped_scenario("h100"));
  const nvmlDevice_t device = harness.device(0);
  EXPECT_EQ(DeviceSetGpuLockedClocks(device, 990, 1981), nvml::kErrorInvalidArgument);
  EXPECT_THAT(harness.driver().last_error(), HasSubstr("[345, 1980] MHz"));
  EXPECT_EQ(DeviceSetGpuLockedClocks(device, 344, 990), nvml::kErrorInvalidArgument);
  EXPECT_EQ(DeviceSetGpuLockedClocks(device, 1500, 990), nvml::kErrorInvalidArgument);
  EXPECT_EQ(DeviceSetGpuLockedClocks(device, 345, 1980), nvml::kSuccess);
}

TEST(LockedClockDriver, ALockIsKeptInTheStateFileWithTheLimitAndTheSpeed) {
  DriverHarness harness;
  harness.init(testing::shipped_scenario("h100"));
  harness.clock().set_scenario_s(10);
  const nvmlDevice_t device = harness.device(0);
  char uuid[96];
  ASSERT_EQ(DeviceGetUUID(device, uuid, sizeof uuid), nvml::kSuccess);
  const StateFile file(harness.dir().file("state.json"));

  ASSERT_EQ(DeviceSetGpuLockedClocks(device, 990, 990), nvml::kSuccess);
  auto entries = file.read();
  ASSERT_TRUE(entries.has_value()) << entries.error();
  EXPECT_EQ(entries->at(uuid).power_limit_mw, 700000U);
  EXPECT_EQ(entries->at(uuid).locked_min_mhz, 990U);
  EXPECT_EQ(entries->at(uuid).locked_max_mhz, 990U);
  EXPECT_DOUBLE_EQ(entries->at(uuid).speed, work_rate(0.85, 0.5));

  // A power limit set later keeps the lock (and the speed is the lower of the two).
  ASSERT_EQ(DeviceSetPowerManagementLimit(device, 300000), nvml::kSuccess);
  entries = file.read();
  EXPECT_EQ(entries->at(uuid).power_limit_mw, 300000U);
  EXPECT_EQ(entries->at(uuid).locked_max_mhz, 990U);
  EXPECT_DOUBLE_EQ(entries->at(uuid).speed, work_rate(0.85, 0.5));

  // The lock binds from the next bucket.
  harness.clock().set_scenario_s(30);
  unsigned int mhz = 0;
  ASSERT_EQ(DeviceGetClockInfo(device, nvml::kClockSm, &mhz), nvml::kSuccess);
  EXPECT_EQ(mhz, 990U);

  ASSERT_EQ(DeviceResetGpuLockedClocks(device), nvml::kSuccess);
  entries = file.read();
  EXPECT_EQ(entries->at(uuid).power_limit_mw, 300000U);
  EXPECT_EQ(entries->at(uuid).locked_min_mhz, 0U);
  EXPECT_EQ(entries->at(uuid).locked_max_mhz, 0U);
  EXPECT_LT(entries->at(uuid).speed, 1.0);  // the 300 W cap alone
  EXPECT_GT(entries->at(uuid).speed, work_rate(0.85, 0.5));
}

// Two drivers on one state file stand for two processes: a sweep and the sampler.
TEST(LockedClockDriver, ALockSetByOneProcessIsSeenByAnother) {
  DriverHarness setter;
  setter.init(testing::shipped_scenario("h100"));
  ManualClock observer_clock;
  Driver observer(observer_clock);
  ASSERT_EQ(observer.init(setter.options(testing::shipped_scenario("h100"))), nvml::kSuccess)
      << observer.last_error();
  setter.clock().set_scenario_s(20);
  observer_clock.set_scenario_s(20);
  ASSERT_EQ(DeviceSetGpuLockedClocks(setter.device(0), 1200, 1200), nvml::kSuccess);

  set_process_driver_for_testing(&observer);
  nvmlDevice_t observed = nullptr;
  ASSERT_EQ(DeviceGetHandleByIndex(0, &observed), nvml::kSuccess);
  observer_clock.advance_ns(60'000'000);  // the observer looks at the file at most every 50 ms
  unsigned int mhz = 0;
  ASSERT_EQ(DeviceGetClockInfo(observed, nvml::kClockSm, &mhz), nvml::kSuccess);
  observer_clock.set_scenario_s(25);
  ASSERT_EQ(DeviceGetClockInfo(observed, nvml::kClockSm, &mhz), nvml::kSuccess);
  EXPECT_EQ(mhz, 1200U);
  EXPECT_EQ(observer.shutdown(), nvml::kSuccess);
  set_process_driver_for_testing(&setter.driver());
}

TEST(LockedClockDriver, AScenarioCanWithholdLockedClocks) {
  DriverHarness harness;
  const std::string path = harness.dir().file("no-locks.json");
  std::ofstream(path) << R"({"phases": [{"name": "idle", "duration_s": 20}],
      "gpus": [{"model": "H100-SXM5-80GB",
                "faults": {"not_supported": ["nvmlDeviceSetGpuLockedClocks",
                                             "nvmlDeviceResetGpuLockedClocks"]}}]})";
  harness.init(path);
  EXPECT_EQ(DeviceSetGpuLockedClocks(harness.device(0), 990, 990), nvml::kErrorNotSupported);
  EXPECT_EQ(DeviceResetGpuLockedClocks(harness.device(0)), nvml::kErrorNotSupported);
}

}  // namespace
}  // namespace gpuscope::sim
