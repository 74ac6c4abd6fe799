// Probing what a GPU supports, once, through the simulated driver.
#include <gtest/gtest.h>

#include "collect/describe.hpp"
#include "sim_env.hpp"

namespace gpuscope::collect {
namespace {

using testing::SimEnvironment;

const Capability& find(const DeviceDescription& d, const std::string& key) {
  for (const auto& c : d.capabilities) {
    if (c.key == key) return c;
  }
  throw std::runtime_error("no capability " + key);
}

SystemDescription describe(const std::string& scenario) {
  SimEnvironment env(scenario);
  nvml::Session session(nvml::Library::open({GPUSCOPE_TEST_SIM_LIBRARY, true}));
  return describe_system(session);
}

TEST(Describe, H100SupportsEveryGroup) {
  auto system = describe(SimEnvironment::shipped("h100"));
  ASSERT_EQ(system.devices.size(), 1U);
  const auto& d = system.devices[0];
  for (const char* key :
       {"gpm", "energy_counter", "power_usage", "instant_power", "average_power", "power_limits",
        "temperature", "clocks", "utilization", "clock_event_reasons", "memory", "processes"}) {
    EXPECT_TRUE(find(d, key).supported) << key << ": " << find(d, key).detail;
  }
  EXPECT_EQ(d.architecture, "Hopper");
  EXPECT_EQ(d.compute_capability, "9.0");
  EXPECT_DOUBLE_EQ(*d.max_power_limit_w, 700.0);
  EXPECT_DOUBLE_EQ(*d.min_power_limit_w, 200.0);
  EXPECT_TRUE(system.driver_version.has_value());
}

TEST(Describe, A100LacksGpmAndSaysWhy) {
  auto system = describe(SimEnvironment::shipped("a100-nogpm"));
  ASSERT_FALSE(system.devices.empty());
  const auto& gpm = find(system.devices[0], "gpm");
  EXPECT_FALSE(gpm.supported);
  EXPECT_EQ(gpm.detail, "Not Supported");
  EXPECT_TRUE(find(system.devices[0], "energy_counter").supported);
}

TEST(Describe, NotSupportedCallsAreProbedAsUnsupported) {
  auto system = describe(SimEnvironment::fixture("not-supported"));
  ASSERT_FALSE(system.devices.empty());
  const auto& energy = find(system.devices[0], "energy_counter");
  EXPECT_FALSE(energy.supported);
  EXPECT_EQ(energy.detail, "Not Supported");
}

}  // namespace
}  // namespace gpuscope::collect
