// The state file carries power limits across processes, like a driver's state until reboot.
#include "sim/state_file.hpp"

#include <sys/stat.h>

#include <fstream>

#include "driver_harness.hpp"

namespace gpuscope::sim {
namespace {

using testing::DriverHarness;
using ::testing::HasSubstr;
using testing::ManualClock;

TEST(StateFile, RoundTripsAndMergesEntries) {
  testing::TempDir dir;
  StateFile state(dir.file("state.json"));
  ASSERT_TRUE(state.read().has_value());
  EXPECT_TRUE(state.read()->empty());  // a missing file has no entries
  ASSERT_TRUE(state.update({{"GPU-a", {300000, 123, 0.75}}}).has_value());
  ASSERT_TRUE(state.update({{"GPU-b", {250000, 456, 0.5}}}).has_value());
  const auto entries = state.read();
  ASSERT_TRUE(entries.has_value()) << entries.error();
  ASSERT_EQ(entries->size(), 2U);
  EXPECT_EQ(entries->at("GPU-a").power_limit_mw, 300000U);
  EXPECT_EQ(entries->at("GPU-a").set_at_unix_ns, 123);
  EXPECT_DOUBLE_EQ(entries->at("GPU-a").speed, 0.75);
  EXPECT_EQ(entries->at("GPU-b").power_limit_mw, 250000U);
}

TEST(StateFile, NoticesReplacementByAnotherWriter) {
  testing::TempDir dir;
  StateFile reader(dir.file("state.json"));
  StateFile writer(dir.file("state.json"));
  EXPECT_FALSE(reader.changed());  // still missing
  ASSERT_TRUE(writer.update({{"GPU-a", {300000, 1, 1.0}}}).has_value());
  EXPECT_TRUE(reader.changed());
  EXPECT_FALSE(reader.changed());
  ASSERT_TRUE(writer.update({{"GPU-a", {310000, 2, 1.0}}}).has_value());
  EXPECT_TRUE(reader.changed());
}

TEST(StateFile, RejectsOtherVersions) {
  testing::TempDir dir;
  std::ofstream(dir.file("state.json")) << R"({"version": 2, "gpus": {}})";
  const auto entries = StateFile(dir.file("state.json")).read();
  ASSERT_FALSE(entries.has_value());
  EXPECT_THAT(entries.error(), HasSubstr("version 2"));
}

TEST(StateFile, SetLimitWritesLimitTimeAndSpeed) {
  DriverHarness harness;
  harness.init(testing::shipped_scenario("h100"));
  harness.clock().set_scenario_s(10);
  ASSERT_EQ(DeviceSetPowerManagementLimit(harness.device(0), 300000), nvml::kSuccess);
  char uuid[96];
  ASSERT_EQ(DeviceGetUUID(harness.device(0), uuid, sizeof uuid), nvml::kSuccess);
  const auto entries = StateFile(harness.dir().file("state.json")).read();
  ASSERT_TRUE(entries.has_value()) << entries.error();
  const StateEntry& entry = entries->at(uuid);
  EXPECT_EQ(entry.power_limit_mw, 300000U);
  EXPECT_EQ(entry.set_at_unix_ns, harness.clock().realtime_ns());
  const Scenario scenario = testing::must_load(testing::shipped_scenario("h100"));
  EXPECT_DOUBLE_EQ(entry.speed, GpuModel(scenario.gpus[0], scenario.seed, 0).steady_speed(300000));
  EXPECT_LT(entry.speed, 1.0);
}

// Two drivers on one state file stand for two processes: a sweep and a sampler.
TEST(StateFile, ALimitSetByOneProcessIsSeenByAnother) {
  DriverHarness setter;
  setter.init(testing::shipped_scenario("h100"));
  ManualClock observer_clock;
  Driver observer(observer_clock);
  DriverOptions options = setter.options(testing::shipped_scenario("h100"));
  ASSERT_EQ(observer.init(options), nvml::kSuccess) << observer.last_error();

  setter.clock().set_scenario_s(20);
  observer_clock.set_scenario_s(20);
  nvmlDevice_t observed = nullptr;
  set_process_driver_for_testing(&observer);
  ASSERT_EQ(DeviceGetHandleByIndex(0, &observed), nvml::kSuccess);
  unsigned int limit = 0;
  ASSERT_EQ(DeviceGetPowerManagementLimit(observed, &limit), nvml::kSuccess);
  EXPECT_EQ(limit, 700000U);

  set_process_driver_for_testing(&setter.driver());
  ASSERT_EQ(DeviceSetPowerManagementLimit(setter.device(0), 300000), nvml::kSuccess);

  set_process_driver_for_testing(&observer);
  // The observer looks at the file at most every 50 ms.
  observer_clock.advance_ns(60'000'000);
  ASSERT_EQ(DeviceGetPowerManagementLimit(observed, &limit), nvml::kSuccess);
  EXPECT_EQ(limit, 300000U);
  // And its model obeys the cap from the next bucket after the time it was set.
  observer_clock.set_scenario_s(25);
  unsigned int power = 0;
  ASSERT_EQ(DeviceGetPowerUsage(observed, &power), nvml::kSuccess);
  EXPECT_LE(power, 303000U);
  EXPECT_EQ(observer.shutdown(), nvml::kSuccess);
  set_process_driver_for_testing(&setter.driver());
}

TEST(StateFile, ALaterProcessStartsWithThePersistedLimit) {
  DriverHarness first;
  first.init(testing::shipped_scenario("h100"));
  ASSERT_EQ(DeviceSetPowerManagementLimit(first.device(0), 250000), nvml::kSuccess);
  ASSERT_EQ(Shutdown(), nvml::kSuccess);

  // A new "process" whose timeline starts after the limit was set: it holds from time zero.
  ManualClock clock;
  clock.advance_ns(3'600'000'000'000);
  Driver later(clock);
  DriverOptions options = first.options(testing::shipped_scenario("h100"));
  options.epoch_ns = clock.realtime_ns();
  ASSERT_EQ(later.init(options), nvml::kSuccess) << later.last_error();
  set_process_driver_for_testing(&later);
  nvmlDevice_t device = nullptr;
  ASSERT_EQ(DeviceGetHandleByIndex(0, &device), nvml::kSuccess);
  unsigned int limit = 0;
  ASSERT_EQ(DeviceGetEnforcedPowerLimit(device, &limit), nvml::kSuccess);
  EXPECT_EQ(limit, 250000U);
  clock.advance_ns(30'000'000'000);
  unsigned long long reasons = 0;
  ASSERT_EQ(DeviceGetCurrentClocksEventReasons(device, &reasons), nvml::kSuccess);
  EXPECT_NE(reasons & nvml::kClocksEventSwPowerCap, 0U);
  EXPECT_EQ(later.shutdown(), nvml::kSuccess);
  set_process_driver_for_testing(&first.driver());
}

TEST(StateFile, ACorruptStateFileFailsInitWithAReason) {
  DriverHarness harness;
  std::ofstream(harness.dir().file("state.json")) << "{not json";
  EXPECT_EQ(harness.driver().init(harness.options(testing::shipped_scenario("h100"))),
            nvml::kErrorUnknown);
  EXPECT_THAT(harness.driver().last_error(), HasSubstr("state file"));
  EXPECT_THAT(harness.driver().last_error(), HasSubstr("delete it to reset"));
}

// A state_file naming a device or a FIFO once hung nvmlInit with memory growing (reading
// /dev/zero never ends; opening a FIFO waits for a writer). Each is refused at once.
TEST(StateFile, RefusesWhatIsNotARegularFile) {
  testing::TempDir dir;
  const std::string fifo = dir.file("state.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path :
       {std::string("/dev/zero"), std::string("/dev/urandom"), fifo, dir.path()}) {
    StateFile state(path);
    const auto entries = state.read();
    ASSERT_FALSE(entries.has_value()) << path;
    EXPECT_THAT(entries.error(), HasSubstr("is not a regular file")) << path;
    EXPECT_THAT(entries.error(), HasSubstr(path));
    EXPECT_FALSE(state.update({{"GPU-a", {300000, 1, 1.0}}}).has_value()) << path;
  }
}

TEST(StateFile, RefusesAFileLargerThanTheCap) {
  testing::TempDir dir;
  const std::string path = dir.file("state.json");
  std::ofstream(path) << std::string(kMaxStateFileBytes + 1, ' ');
  const auto entries = StateFile(path).read();
  ASSERT_FALSE(entries.has_value());
  EXPECT_THAT(entries.error(), HasSubstr("larger than 1 MiB"));
}

TEST(StateFile, AScenarioStateFileOnADeviceFailsInitWithAReason) {
  DriverHarness harness;
  const std::string scenario = harness.dir().file("scenario.json");
  std::ofstream(scenario) << R"({"name": "dev", "state_file": "/dev/zero",
    "phases": [{"name": "idle", "duration_s": 1}], "gpus": [{"model": "H100-SXM5-80GB"}]})";
  DriverOptions options = harness.options(scenario);
  options.state_path.reset();  // the scenario's state_file, as gpuscope devices would use it
  EXPECT_EQ(harness.driver().init(options), nvml::kErrorUnknown);
  EXPECT_THAT(harness.driver().last_error(), HasSubstr("/dev/zero is not a regular file"));
}

}  // namespace
}  // namespace gpuscope::sim
