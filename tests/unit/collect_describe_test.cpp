// Probing what a GPU supports, once, through the simulated driver.
#include <gtest/gtest.h>

#include <fstream>

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

// What the scenario gives each instance (inputs) and the profiles' facts (nvidia-smi mig -lgip).
struct WantMig {
  const char* uuid;
  const char* profile;
  unsigned gi;
  unsigned slices;
  unsigned sms;
  std::uint64_t memory_mib;
};

void expect_mig(const std::string& scenario, const char* architecture,
                const std::vector<WantMig>& want) {
  auto system = describe(SimEnvironment::fixture(scenario));
  ASSERT_EQ(system.devices.size(), 1 + want.size());
  const auto& gpu = system.devices[0];
  EXPECT_EQ(gpu.index, 0U);
  EXPECT_EQ(gpu.mig_enabled, true);
  EXPECT_FALSE(gpu.mig.has_value());
  for (std::size_t i = 0; i < want.size(); ++i) {
    const auto& d = system.devices[1 + i];
    SCOPED_TRACE(want[i].profile);
    ASSERT_TRUE(d.mig.has_value());
    EXPECT_EQ(d.index, mig_device_index(0, want[i].gi));
    EXPECT_EQ(d.uuid, want[i].uuid);
    EXPECT_EQ(d.name, *gpu.name + " MIG " + want[i].profile);
    EXPECT_EQ(d.memory_total_bytes, want[i].memory_mib << 20U);
    EXPECT_EQ(d.architecture, architecture);
    EXPECT_FALSE(d.mig_enabled.has_value());
    const MigIdentity& m = *d.mig;
    EXPECT_EQ(m.parent_index, 0U);
    EXPECT_EQ(m.mig_index, i);
    EXPECT_EQ(m.gpu_instance_id, want[i].gi);
    EXPECT_EQ(m.compute_instance_id, 0U);
    EXPECT_EQ(m.profile, want[i].profile);
    EXPECT_EQ(m.gpu_slices, want[i].slices);
    EXPECT_EQ(m.compute_slices, want[i].slices);
    EXPECT_EQ(m.multiprocessors, want[i].sms);
    EXPECT_EQ(m.parent_slices, 7U);
    EXPECT_TRUE(find(d, "memory").supported);
    EXPECT_TRUE(find(d, "processes").supported);
    EXPECT_EQ(find(d, "gpm").supported, std::string(architecture) == "Hopper");
    // Nothing the GPU does not split.
    EXPECT_FALSE(d.power_limit_w.has_value());
    EXPECT_FALSE(d.max_sm_clock_mhz.has_value());
    EXPECT_THROW(find(d, "power_usage"), std::runtime_error);
  }
}

TEST(Describe, H100InMigModeListsItsInstancesAfterTheGpus) {
  expect_mig("h100-mig-mixed", "Hopper",
             {{"MIG-b1000000-0000-5000-8000-000000000041", "4g.40gb", 1, 4, 64, 40448},
              {"MIG-b1000000-0000-5000-8000-000000000022", "2g.20gb", 3, 2, 32, 20096},
              {"MIG-b1000000-0000-5000-8000-000000000013", "1g.10gb", 7, 1, 16, 9984}});
}

TEST(Describe, A100InMigModeHasNoGpmPerInstance) {
  expect_mig("a100-mig-mixed", "Ampere",
             {{"MIG-a1000000-0000-5000-8000-000000000031", "3g.40gb", 1, 3, 42, 40192},
              {"MIG-a1000000-0000-5000-8000-000000000022", "2g.20gb", 3, 2, 28, 19968},
              {"MIG-a1000000-0000-5000-8000-000000000017", "1g.10gb", 7, 1, 14, 9728},
              {"MIG-a1000000-0000-5000-8000-000000000018", "1g.10gb", 8, 1, 14, 9728}});
}

TEST(Describe, MigModeOnWithoutInstancesListsNoMigDevice) {
  auto system = describe(SimEnvironment::fixture("h100-mig-empty"));
  ASSERT_EQ(system.devices.size(), 1U);
  EXPECT_EQ(system.devices[0].mig_enabled, true);
}

TEST(Describe, MigModeOffAndGpusWithoutMig) {
  auto h100 = describe(SimEnvironment::shipped("h100"));
  EXPECT_EQ(h100.devices[0].mig_enabled, false);
  // A V100 cannot do MIG: NVML says NOT_SUPPORTED, and gpuscope says nothing.
  testing::TempDir dir;
  const std::string path = dir.file("v100.json");
  std::ofstream(path) << R"({"name": "v100", "phases": [{"name": "idle", "duration_s": 1}],)"
                      << R"( "gpus": [{"model": "V100-SXM2-32GB"}]})";
  auto v100 = describe(path);
  ASSERT_EQ(v100.devices.size(), 1U);
  EXPECT_FALSE(v100.devices[0].mig_enabled.has_value());
}

TEST(Describe, MigDevicesNvmlGivesNoInstanceForAreLeftOut) {
  // h100x2-mig: MIG UUIDs without GPU instances (nvmlDeviceGetGpuInstanceId: NOT_SUPPORTED).
  auto system = describe(SimEnvironment::fixture("h100x2-mig"));
  ASSERT_EQ(system.devices.size(), 2U);
  EXPECT_EQ(system.devices[1].mig_enabled, true);
}

}  // namespace
}  // namespace gpuscope::collect
