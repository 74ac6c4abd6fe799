// Scenario faults: lost GPUs, unsupported calls and fields, slow calls, missing permissions.
#include <chrono>

#include "driver_harness.hpp"

namespace gpuscope::sim {
namespace {

using testing::DriverHarness;
using ::testing::HasSubstr;

TEST(Faults, GpuIsLostFromItsLostTimeOn) {
  DriverHarness harness;
  harness.init(testing::shipped_scenario("h100x2-gpu-lost"));
  nvmlDevice_t gpu0 = harness.device(0);
  nvmlDevice_t gpu1 = harness.device(1);
  unsigned int milliwatts = 0;
  harness.clock().set_scenario_s(7.999);
  EXPECT_EQ(DeviceGetPowerUsage(gpu1, &milliwatts), nvml::kSuccess);
  harness.clock().set_scenario_s(8.0);
  EXPECT_EQ(DeviceGetPowerUsage(gpu1, &milliwatts), nvml::kErrorGpuIsLost);
  EXPECT_THAT(harness.driver().last_error(), HasSubstr("nvmlDeviceGetPowerUsage on GPU 1"));
  char name[96];
  EXPECT_EQ(DeviceGetName(gpu1, name, sizeof name), nvml::kErrorGpuIsLost);
  nvmlDevice_t handle = nullptr;
  EXPECT_EQ(DeviceGetHandleByIndex(1, &handle), nvml::kErrorGpuIsLost);
  unsigned int count = 0;
  EXPECT_EQ(DeviceGetCount(&count), nvml::kSuccess);
  EXPECT_EQ(count, 2U);  // still enumerated
  EXPECT_EQ(DeviceGetPowerUsage(gpu0, &milliwatts), nvml::kSuccess);
}

TEST(Faults, NotSupportedCallsAndFields) {
  DriverHarness harness;
  harness.init(testing::fixture_scenario("not-supported"));
  unsigned long long energy = 0;
  unsigned int milliwatts = 0;
  EXPECT_EQ(DeviceGetTotalEnergyConsumption(harness.device(0), &energy), nvml::kErrorNotSupported);
  EXPECT_EQ(DeviceGetPowerUsage(harness.device(0), &milliwatts), nvml::kSuccess);
  EXPECT_EQ(DeviceGetPowerUsage(harness.device(1), &milliwatts), nvml::kErrorNotSupported);
  nvmlGpmSupport_t support{nvml::kGpmSupportVersion, 0};
  EXPECT_EQ(GpmQueryDeviceSupport(harness.device(1), &support), nvml::kErrorNotSupported);
  nvmlFieldValue_t values[3] = {};
  values[0].fieldId = nvml::kFieldTotalEnergyConsumption;
  values[1].fieldId = nvml::kFieldPowerInstant;
  values[2].fieldId = nvml::kFieldPowerAverage;
  ASSERT_EQ(DeviceGetFieldValues(harness.device(0), 3, values), nvml::kSuccess);
  EXPECT_EQ(values[0].nvmlReturn, nvml::kErrorNotSupported);
  EXPECT_EQ(values[1].nvmlReturn, nvml::kErrorNotSupported);
  EXPECT_EQ(values[2].nvmlReturn, nvml::kSuccess);
}

TEST(Faults, SlowCallsTakeTheirLatency) {
  DriverHarness harness;
  harness.init(testing::fixture_scenario("slow-calls"));
  nvmlDevice_t device = harness.device(0);
  const auto time_call = [](auto&& call) {
    const auto start = std::chrono::steady_clock::now();
    call();
    return std::chrono::steady_clock::now() - start;
  };
  unsigned int milliwatts = 0;
  EXPECT_GE(time_call([&] { DeviceGetPowerUsage(device, &milliwatts); }),
            std::chrono::milliseconds(20));
  char name[96];
  EXPECT_GE(time_call([&] { DeviceGetName(device, name, sizeof name); }),
            std::chrono::milliseconds(1));
  nvmlFieldValue_t value{};
  value.fieldId = nvml::kFieldPowerInstant;
  ASSERT_EQ(DeviceGetFieldValues(device, 1, &value), nvml::kSuccess);
  EXPECT_EQ(value.latencyUsec, 1000);
}

TEST(Faults, UnprivilegedCallersCannotSetTheLimit) {
  DriverHarness harness;
  harness.init(testing::fixture_scenario("no-permission"));
  EXPECT_EQ(DeviceSetPowerManagementLimit(harness.device(0), 300000), nvml::kErrorNoPermission);
  EXPECT_THAT(harness.driver().last_error(), HasSubstr("privileged"));
  unsigned int limit = 0;
  ASSERT_EQ(DeviceGetPowerManagementLimit(harness.device(0), &limit), nvml::kSuccess);
  EXPECT_EQ(limit, 700000U);
}

TEST(Faults, EnvironmentOverridesPrivilege) {
  DriverHarness harness;
  DriverOptions options = harness.options(testing::shipped_scenario("h100"));
  options.privileged = false;
  ASSERT_EQ(harness.driver().init(options), nvml::kSuccess);
  EXPECT_EQ(DeviceSetPowerManagementLimit(harness.device(0), 300000), nvml::kErrorNoPermission);
}

TEST(Faults, LimitsOutsideTheConstraintsAreInvalid) {
  DriverHarness harness;
  harness.init(testing::shipped_scenario("h100"));
  unsigned int min = 0, max = 0;
  ASSERT_EQ(DeviceGetPowerManagementLimitConstraints(harness.device(0), &min, &max),
            nvml::kSuccess);
  EXPECT_EQ(min, 200000U);
  EXPECT_EQ(max, 700000U);
  EXPECT_EQ(DeviceSetPowerManagementLimit(harness.device(0), 199999), nvml::kErrorInvalidArgument);
  EXPECT_THAT(harness.driver().last_error(), HasSubstr("outside the constraints"));
  EXPECT_EQ(DeviceSetPowerManagementLimit(harness.device(0), 700001), nvml::kErrorInvalidArgument);
  EXPECT_EQ(DeviceSetPowerManagementLimit(harness.device(0), 200000), nvml::kSuccess);
}

}  // namespace
}  // namespace gpuscope::sim
