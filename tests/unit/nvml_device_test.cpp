// Typed device access through the real loader against the simulated driver.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "nvml/gpm.hpp"
#include "nvml/session.hpp"
#include "sim_env.hpp"

namespace gpuscope::nvml {
namespace {

using testing::SimEnvironment;

std::shared_ptr<const Library> sim() {
  return Library::open({GPUSCOPE_TEST_SIM_LIBRARY, true});
}

TEST(NvmlDevice, H100IdentityAndLimits) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  Session session(sim());
  ASSERT_EQ(session.device_count(), 1U);
  Device device = session.device(0);
  EXPECT_EQ(*device.name(), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(device.uuid()->rfind("GPU-", 0), 0U);
  EXPECT_EQ(*device.architecture(), kArchHopper);
  EXPECT_EQ(device.compute_capability()->major, 9);
  auto memory = device.memory();
  ASSERT_TRUE(memory.has_value());
  EXPECT_EQ(memory->total_bytes, 81559ULL * 1024 * 1024);
  EXPECT_EQ(memory->total_bytes, memory->free_bytes + memory->used_bytes + memory->reserved_bytes);
  auto constraints = device.power_limit_constraints_mw();
  ASSERT_TRUE(constraints.has_value());
  EXPECT_EQ(constraints->min_mw, 200000U);
  EXPECT_EQ(constraints->max_mw, 700000U);
  EXPECT_EQ(*device.default_power_limit_mw(), 700000U);
  EXPECT_EQ(*device.max_clock_mhz(ClockType::Sm), 1980U);
  EXPECT_TRUE(*device.gpm_supported());
}

TEST(NvmlDevice, LookupByUuidFindsTheSameIndex) {
  SimEnvironment env(SimEnvironment::shipped("h100x4-straggler"));
  Session session(sim());
  const std::string uuid = *session.device(3).uuid();
  auto found = session.device_by_uuid(uuid);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->index(), 3U);
  auto missing = session.device_by_uuid("GPU-00000000-0000-0000-0000-000000000000");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, kErrorNotFound);
}

TEST(NvmlDevice, MigUuidResolvesToItsParentGpu) {
  SimEnvironment env(SimEnvironment::fixture("h100x2-mig"));
  Session session(sim());
  // The fixture's GPU 1 has three MIG devices; this is the second.
  auto parent = session.parent_of_mig("MIG-1d6e8b20-4a9f-5e73-8c1b-7f2d0a6e9b34");
  ASSERT_TRUE(parent.has_value()) << session.library()->describe(parent.error());
  EXPECT_EQ(parent->index(), 1U);
  EXPECT_EQ(*parent->uuid(), "GPU-a7d90e34-1c6b-4f28-8e0d-5b3a2f9c7e61");
  EXPECT_EQ(session.parent_of_mig("MIG-5e2a0c17-3b9d-5f4e-8a61-2c7d9e0b4f18")->index(), 0U);
  // A MIG UUID names no whole GPU, and a GPU's UUID names no MIG device.
  auto as_gpu = session.device_by_uuid("MIG-1d6e8b20-4a9f-5e73-8c1b-7f2d0a6e9b34");
  ASSERT_FALSE(as_gpu.has_value());
  EXPECT_EQ(as_gpu.error().code, kErrorNotFound);
  auto full = session.parent_of_mig("GPU-a7d90e34-1c6b-4f28-8e0d-5b3a2f9c7e61");
  ASSERT_FALSE(full.has_value());
  EXPECT_EQ(full.error().code, kErrorInvalidArgument);
  auto missing = session.parent_of_mig("MIG-00000000-0000-0000-0000-000000000000");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, kErrorNotFound);
}

TEST(NvmlDevice, EnergyCounterAdvancesWithPower) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  Session session(sim());
  Device device = session.device(0);
  const auto before = device.total_energy_mj();
  ASSERT_TRUE(before.has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto after = device.total_energy_mj();
  ASSERT_TRUE(after.has_value());
  // At least the idle power of an H100 (tens of watts) over 0.3 s: well above 1 J.
  EXPECT_GT(*after - *before, 1000U);
  EXPECT_LT(*after - *before, 700U * 1000U);  // never more than 700 W for 1 s
}

TEST(NvmlDevice, FieldValuesReportPerFieldSupport) {
  SimEnvironment env(SimEnvironment::shipped("a100-nogpm"));
  Session session(sim());
  Device device = session.device(0);
  nvmlFieldValue_t values[2]{};
  values[0].fieldId = kFieldPowerAverage;
  values[1].fieldId = 9999;  // no such field
  ASSERT_TRUE(device.field_values(values).has_value());
  EXPECT_TRUE(field_as_double(values[0]).has_value());
  EXPECT_FALSE(field_as_double(values[1]).has_value());
  EXPECT_NE(values[1].nvmlReturn, kSuccess);
}

TEST(NvmlDevice, A100HasNoGpm) {
  SimEnvironment env(SimEnvironment::shipped("a100-nogpm"));
  Session session(sim());
  Device device = session.device(0);
  EXPECT_EQ(*device.architecture(), kArchAmpere);
  auto supported = device.gpm_supported();
  ASSERT_TRUE(supported.has_value());
  EXPECT_FALSE(*supported);
}

TEST(NvmlDevice, GpmMetricsBetweenTwoSamples) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  auto library = sim();
  Session session(library);
  Device device = session.device(0);
  auto first = GpmSample::allocate(library);
  auto second = GpmSample::allocate(library);
  ASSERT_TRUE(first && second);
  ASSERT_TRUE(first->take(device));
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  ASSERT_TRUE(second->take(device));
  const unsigned ids[] = {kGpmSmUtil, kGpmSmOccupancy, kGpmAnyTensorUtil, kGpmDramBwUtil, 4000};
  GpmQuery query(library, ids);
  std::optional<double> values[5];
  ASSERT_TRUE(query.compute(*first, *second, values));
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(values[i].has_value()) << "metric " << ids[i];
    EXPECT_GE(*values[i], 0.0);
    EXPECT_LE(*values[i], 100.0);
  }
  EXPECT_FALSE(values[4].has_value());  // an id the driver does not know
}

TEST(NvmlDevice, SetPowerLimitIsVisibleAndChecked) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  Session session(sim());
  Device device = session.device(0);
  ASSERT_TRUE(device.set_power_limit_mw(400000));
  EXPECT_EQ(*device.power_limit_mw(), 400000U);
  EXPECT_EQ(*device.enforced_power_limit_mw(), 400000U);
  auto too_low = device.set_power_limit_mw(100000);
  ASSERT_FALSE(too_low.has_value());
  EXPECT_EQ(too_low.error().code, kErrorInvalidArgument);
  EXPECT_EQ(*device.power_limit_mw(), 400000U);
}

TEST(NvmlDevice, SetPowerLimitWithoutPrivilegeIsRefused) {
  SimEnvironment env(SimEnvironment::shipped("h100"));
  setenv("GPUSCOPE_SIM_PRIVILEGED", "0", 1);
  Session session(sim());
  auto result = session.device(0).set_power_limit_mw(400000);
  unsetenv("GPUSCOPE_SIM_PRIVILEGED");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, kErrorNoPermission);
  EXPECT_STREQ(result.error().symbol, "nvmlDeviceSetPowerManagementLimit");
}

TEST(NvmlDevice, LostGpuReportsGpuIsLost) {
  SimEnvironment env(SimEnvironment::shipped("h100x2-gpu-lost"));
  setenv("GPUSCOPE_SIM_TIME_SCALE", "100", 1);  // 8 scenario seconds pass in 80 ms
  Session session(sim());
  Device healthy = session.device(0);
  Device doomed = session.device(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  auto power = doomed.power_usage_mw();
  unsetenv("GPUSCOPE_SIM_TIME_SCALE");
  ASSERT_FALSE(power.has_value());
  EXPECT_EQ(power.error().code, kErrorGpuIsLost);
  EXPECT_TRUE(healthy.power_usage_mw().has_value());
}

}  // namespace
}  // namespace gpuscope::nvml
