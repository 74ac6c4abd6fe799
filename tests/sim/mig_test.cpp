// MIG devices: the scenario's "mig_devices", handles by MIG UUID, and the two MIG entry points.
#include <fstream>
#include <string>

#include "driver_harness.hpp"

namespace gpuscope::sim {
namespace {

using testing::DriverHarness;
using ::testing::HasSubstr;
using testing::must_parse;
using testing::parse_error;

// Of tests/fixtures/scenarios/h100x2-mig.json: GPU 0's first MIG device and GPU 1's second.
constexpr const char* kMigOfGpu0 = "MIG-5e2a0c17-3b9d-5f4e-8a61-2c7d9e0b4f18";
constexpr const char* kMigOfGpu1 = "MIG-1d6e8b20-4a9f-5e73-8c1b-7f2d0a6e9b34";

nvmlDevice_t handle_by_uuid(const char* uuid) {
  nvmlDevice_t handle = nullptr;
  EXPECT_EQ(DeviceGetHandleByUUID(uuid, &handle), nvml::kSuccess) << uuid;
  return handle;
}

std::string two_gpus_with(const std::string& gpu0, const std::string& gpu1) {
  return R"({"phases": [{"name": "idle", "duration_s": 1}], "gpus": [)" + gpu0 + ", " + gpu1 + "]}";
}

TEST(MigScenario, ListsTheMigDevicesOfEachGpu) {
  const Scenario scenario = testing::must_load(testing::fixture_scenario("h100x2-mig"));
  ASSERT_EQ(scenario.gpus.size(), 2U);
  EXPECT_EQ(scenario.gpus[0].mig_devices.size(), 2U);
  EXPECT_EQ(scenario.gpus[1].mig_devices.size(), 3U);
  EXPECT_EQ(scenario.gpus[1].mig_devices[1], kMigOfGpu1);
  const Scenario plain = must_parse(R"({"phases": [{"name": "idle", "duration_s": 1}],
                                        "gpus": [{"model": "H100-SXM5-80GB"}]})");
  ASSERT_EQ(plain.gpus.size(), 1U);
  EXPECT_TRUE(plain.gpus[0].mig_devices.empty());
}

TEST(MigScenario, RejectsBadMigDeviceLists) {
  const std::string h100 = R"({"model": "H100-SXM5-80GB")";
  EXPECT_THAT(parse_error(two_gpus_with(h100 + R"(, "mig_devices": ["GPU-1234"]})", h100 + "}")),
              HasSubstr("/gpus/0/mig_devices/0: \"GPU-1234\" is not a MIG device UUID"));
  EXPECT_THAT(parse_error(two_gpus_with(h100 + "}", h100 + R"(, "mig_devices": "MIG-1"})")),
              HasSubstr("/gpus/1/mig_devices: expected an array"));
  EXPECT_THAT(parse_error(two_gpus_with(h100 + R"(, "mig_devices": [7]})", h100 + "}")),
              HasSubstr("/gpus/0/mig_devices/0: expected a string"));
  EXPECT_THAT(parse_error(two_gpus_with(
                  h100 + R"(, "mig_devices": ["MIG-1","MIG-2","MIG-3","MIG-4","MIG-5","MIG-6",
                                              "MIG-7","MIG-8"]})",
                  h100 + "}")),
              HasSubstr("/gpus/0/mig_devices: 8 MIG devices: a GPU has at most 7"));
}

TEST(MigScenario, MigDeviceUuidsAreUniqueAcrossTheScenario) {
  const std::string h100 = R"({"model": "H100-SXM5-80GB")";
  EXPECT_THAT(parse_error(two_gpus_with(h100 + R"(, "mig_devices": ["MIG-a", "MIG-b"]})",
                                        h100 + R"(, "mig_devices": ["MIG-c", "MIG-a"]})")),
              HasSubstr("/gpus/1/mig_devices/1: duplicate MIG device UUID MIG-a"));
  EXPECT_THAT(
      parse_error(two_gpus_with(h100 + R"(, "mig_devices": ["MIG-a", "MIG-a"]})", h100 + "}")),
      HasSubstr("/gpus/0/mig_devices/1: duplicate MIG device UUID MIG-a"));
  // The count form copies the template's list to every GPU: the same devices twice.
  EXPECT_THAT(parse_error(R"({"phases": [{"name": "idle", "duration_s": 1}],
      "gpus": {"count": 2, "template": {"model": "H100-SXM5-80GB", "mig_devices": ["MIG-a"]}}})"),
              HasSubstr("/gpus/template/mig_devices/0: duplicate MIG device UUID MIG-a"));
}

TEST(MigScenario, MigDevicesKeyIsSpellChecked) {
  EXPECT_THAT(parse_error(R"({"phases": [{"name": "idle", "duration_s": 1}],
      "gpus": [{"model": "H100-SXM5-80GB", "mig_device": ["MIG-a"]}]})"),
              HasSubstr("unknown key \"mig_device\" (did you mean \"mig_devices\"?)"));
}

TEST(MigDriver, HandleByMigUuidIsAMigHandleOfItsGpu) {
  DriverHarness harness;
  harness.init(testing::fixture_scenario("h100x2-mig"));
  const nvmlDevice_t mig = handle_by_uuid(kMigOfGpu1);
  ASSERT_NE(mig, nullptr);
  const nvmlDevice_t gpu0 = harness.device(0);
  const nvmlDevice_t gpu1 = harness.device(1);
  EXPECT_NE(mig, gpu0);
  EXPECT_NE(mig, gpu1);
  EXPECT_NE(handle_by_uuid(kMigOfGpu0), mig);

  unsigned int is_mig = 7;
  ASSERT_EQ(DeviceIsMigDeviceHandle(mig, &is_mig), nvml::kSuccess);
  EXPECT_EQ(is_mig, 1U);
  ASSERT_EQ(DeviceIsMigDeviceHandle(gpu1, &is_mig), nvml::kSuccess);
  EXPECT_EQ(is_mig, 0U);
  EXPECT_EQ(DeviceIsMigDeviceHandle(mig, nullptr), nvml::kErrorInvalidArgument);

  nvmlDevice_t parent = nullptr;
  ASSERT_EQ(DeviceGetDeviceHandleFromMigDeviceHandle(mig, &parent), nvml::kSuccess);
  EXPECT_EQ(parent, gpu1);
  ASSERT_EQ(DeviceGetDeviceHandleFromMigDeviceHandle(handle_by_uuid(kMigOfGpu0), &parent),
            nvml::kSuccess);
  EXPECT_EQ(parent, gpu0);
}

TEST(MigDriver, ParentOfANonMigHandleIsAnInvalidArgument) {
  DriverHarness harness;
  harness.init(testing::fixture_scenario("h100x2-mig"));
  nvmlDevice_t parent = nullptr;
  EXPECT_EQ(DeviceGetDeviceHandleFromMigDeviceHandle(harness.device(0), &parent),
            nvml::kErrorInvalidArgument);
  EXPECT_THAT(harness.driver().last_error(), HasSubstr("not a MIG device handle"));
  EXPECT_EQ(parent, nullptr);
  nvmlDevice_st foreign{};
  EXPECT_EQ(DeviceGetDeviceHandleFromMigDeviceHandle(&foreign, &parent),
            nvml::kErrorInvalidArgument);
  unsigned int is_mig = 0;
  EXPECT_EQ(DeviceIsMigDeviceHandle(&foreign, &is_mig), nvml::kErrorInvalidArgument);
  EXPECT_EQ(DeviceGetDeviceHandleFromMigDeviceHandle(handle_by_uuid(kMigOfGpu0), nullptr),
            nvml::kErrorInvalidArgument);
}

TEST(MigDriver, UnknownMigUuidIsNotFound) {
  DriverHarness harness;
  harness.init(testing::fixture_scenario("h100x2-mig"));
  nvmlDevice_t handle = nullptr;
  EXPECT_EQ(DeviceGetHandleByUUID("MIG-00000000-0000-0000-0000-000000000000", &handle),
            nvml::kErrorNotFound);
}

TEST(MigDriver, OtherCallsOnAMigHandleAreNotSupported) {
  DriverHarness harness;
  harness.init(testing::fixture_scenario("h100x2-mig"));
  harness.clock().set_scenario_s(5);
  const nvmlDevice_t mig = handle_by_uuid(kMigOfGpu1);
  char text[96] = {};
  unsigned int value = 0;
  EXPECT_EQ(DeviceGetName(mig, text, sizeof text), nvml::kErrorNotSupported);
  EXPECT_THAT(harness.driver().last_error(), HasSubstr("MIG device handle"));
  EXPECT_EQ(DeviceGetUUID(mig, text, sizeof text), nvml::kErrorNotSupported);
  EXPECT_EQ(DeviceGetPowerUsage(mig, &value), nvml::kErrorNotSupported);
  EXPECT_EQ(DeviceSetPowerManagementLimit(mig, 300000), nvml::kErrorNotSupported);
  nvmlGpmSupport_t support{nvml::kGpmSupportVersion, 1};
  EXPECT_EQ(GpmQueryDeviceSupport(mig, &support), nvml::kErrorNotSupported);
  nvmlGpmSample_t sample = nullptr;
  ASSERT_EQ(GpmSampleAlloc(&sample), nvml::kSuccess);
  EXPECT_EQ(GpmSampleGet(mig, sample), nvml::kErrorNotSupported);
  EXPECT_EQ(GpmSampleFree(sample), nvml::kSuccess);

  // The parent itself answers as usual, and its power limit was left alone.
  const nvmlDevice_t gpu1 = harness.device(1);
  ASSERT_EQ(DeviceGetUUID(gpu1, text, sizeof text), nvml::kSuccess);
  EXPECT_STREQ(text, "GPU-a7d90e34-1c6b-4f28-8e0d-5b3a2f9c7e61");
  ASSERT_EQ(DeviceGetPowerManagementLimit(gpu1, &value), nvml::kSuccess);
  EXPECT_EQ(value, 700000U);
  EXPECT_EQ(DeviceGetPowerUsage(gpu1, &value), nvml::kSuccess);
}

TEST(MigDriver, LostParentMakesTheMigDeviceLost) {
  DriverHarness harness;
  const std::string path = harness.dir().file("mig-lost.json");
  std::ofstream(path) << R"({"phases": [{"name": "idle", "duration_s": 20}],
      "gpus": [{"model": "H100-SXM5-80GB", "mig_devices": ["MIG-keep"]},
               {"model": "H100-SXM5-80GB", "mig_devices": ["MIG-lost"],
                "faults": {"lost_at_s": 5}}]})";
  harness.init(path);
  const nvmlDevice_t mig = handle_by_uuid("MIG-lost");
  nvmlDevice_t parent = nullptr;
  ASSERT_EQ(DeviceGetDeviceHandleFromMigDeviceHandle(mig, &parent), nvml::kSuccess);

  harness.clock().set_scenario_s(6);
  parent = nullptr;
  EXPECT_EQ(DeviceGetDeviceHandleFromMigDeviceHandle(mig, &parent), nvml::kErrorGpuIsLost);
  EXPECT_EQ(parent, nullptr);
  EXPECT_THAT(harness.driver().last_error(), HasSubstr("on GPU 1"));
  nvmlDevice_t again = nullptr;
  EXPECT_EQ(DeviceGetHandleByUUID("MIG-lost", &again), nvml::kErrorGpuIsLost);
  // What the handle is does not depend on the GPU being there.
  unsigned int is_mig = 0;
  ASSERT_EQ(DeviceIsMigDeviceHandle(mig, &is_mig), nvml::kSuccess);
  EXPECT_EQ(is_mig, 1U);
  // The other GPU's MIG device is unaffected.
  ASSERT_EQ(DeviceGetDeviceHandleFromMigDeviceHandle(handle_by_uuid("MIG-keep"), &parent),
            nvml::kSuccess);
  EXPECT_EQ(parent, harness.device(0));
}

TEST(MigDriver, MigEntryPointsHonourNotSupportedFaults) {
  DriverHarness harness;
  const std::string path = harness.dir().file("mig-faults.json");
  std::ofstream(path) << R"({"phases": [{"name": "idle", "duration_s": 20}],
      "gpus": [{"model": "H100-SXM5-80GB", "mig_devices": ["MIG-a"],
                "faults": {"not_supported": ["nvmlDeviceGetDeviceHandleFromMigDeviceHandle",
                                             "DeviceIsMigDeviceHandle"]}}]})";
  harness.init(path);
  const nvmlDevice_t mig = handle_by_uuid("MIG-a");
  nvmlDevice_t parent = nullptr;
  unsigned int is_mig = 0;
  EXPECT_EQ(DeviceGetDeviceHandleFromMigDeviceHandle(mig, &parent), nvml::kErrorNotSupported);
  EXPECT_EQ(DeviceIsMigDeviceHandle(mig, &is_mig), nvml::kErrorNotSupported);
}

TEST(MigDriver, MigHandlesDieWithShutdown) {
  DriverHarness harness;
  harness.init(testing::fixture_scenario("h100x2-mig"));
  const nvmlDevice_t mig = handle_by_uuid(kMigOfGpu0);
  ASSERT_EQ(Shutdown(), nvml::kSuccess);
  unsigned int is_mig = 0;
  EXPECT_EQ(DeviceIsMigDeviceHandle(mig, &is_mig), nvml::kErrorUninitialized);
  harness.init(testing::fixture_scenario("h100x2-mig"));
  // The new nvmlInit builds the MIG handles afresh.
  const nvmlDevice_t fresh = handle_by_uuid(kMigOfGpu0);
  ASSERT_EQ(DeviceIsMigDeviceHandle(fresh, &is_mig), nvml::kSuccess);
  EXPECT_EQ(is_mig, 1U);
}

}  // namespace
}  // namespace gpuscope::sim
