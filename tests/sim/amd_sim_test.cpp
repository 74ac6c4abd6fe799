// The simulated AMD GPUs: the "amd_gpus" scenarios, each MI250X card's two GCDs as devices, the
// energy accumulator's resolution and wrap-around, power caps, and the "amd" object's faults.
#include "sim/amd_sim.hpp"

#include <cmath>

#include "amd/abi.hpp"
#include "test_support.hpp"

namespace gpuscope::sim {
namespace {

using testing::fixture_scenario;
using ::testing::HasSubstr;
using testing::ManualClock;
using testing::parse_error;
using testing::shipped_scenario;
using testing::TempDir;

// Each test's own state file: a cap one test sets is not the next one's starting cap.
DriverOptions options_for(const std::string& path, bool privileged = true) {
  static TempDir dir;
  static int count = 0;
  DriverOptions options;
  options.scenario_path = path;
  options.state_path = dir.file("state-" + std::to_string(++count) + ".json");
  options.epoch_ns = ManualClock::kStart;
  options.privileged = privileged;
  return options;
}

TEST(AmdSim, Mi250xListsEachCardsTwoGcdsAsDevices) {
  ManualClock clock;
  AmdSim sim(clock, /*rocm_smi=*/false);
  ASSERT_EQ(sim.init(options_for(shipped_scenario("mi250x"))), AmdResult::Ok);
  std::uint32_t count = 0;
  ASSERT_EQ(sim.count(count), AmdResult::Ok);
  ASSERT_EQ(count, 8U);
  for (std::uint32_t i = 0; i < count; ++i) {
    const AmdGpuConfig* device = sim.config(i);
    ASSERT_NE(device, nullptr);
    EXPECT_EQ(device->card, i / 2);
    EXPECT_EQ(device->gcd, i % 2);
    EXPECT_EQ(device->gpu.spec.name, "AMD Instinct MI250X");
    EXPECT_EQ(device->gpu.spec.memory_mib, 65536U);  // half of a card's 128 GB
  }
  EXPECT_NE(sim.config(0)->gpu.uuid, sim.config(1)->gpu.uuid);
  EXPECT_NE(sim.config(0)->gpu.pci_bus_id, sim.config(1)->gpu.pci_bus_id);
  EXPECT_EQ(sim.cards(), (std::vector<unsigned>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(sim.config(8), nullptr);
}

TEST(AmdSim, ReadingsFollowThePhases) {
  ManualClock clock;
  AmdSim sim(clock, false);
  ASSERT_EQ(sim.init(options_for(shipped_scenario("mi300x"))), AmdResult::Ok);
  AmdReading idle;
  ASSERT_EQ(sim.read(0, idle), AmdResult::Ok);
  clock.set_scenario_s(30);  // steady compute
  AmdReading busy;
  ASSERT_EQ(sim.read(0, busy), AmdResult::Ok);
  EXPECT_EQ(idle.gfx_activity, 0U);
  EXPECT_GT(busy.gfx_activity, 90U);
  EXPECT_GT(busy.umc_activity, 40U);
  EXPECT_GT(busy.average_power_w, idle.average_power_w + 200);
  EXPECT_GT(busy.memory_used_bytes, std::uint64_t{140} << 30U);
  EXPECT_GT(busy.xgmi_read_kb, idle.xgmi_read_kb);
  EXPECT_GT(busy.temperature_c, idle.temperature_c);
}

// The accumulator counts 15.3 µJ units: count differences times the resolution are the energy
// the model's power says, over the time the time stamps say.
TEST(AmdSim, EnergyCountsAreInTheLibrariesResolution) {
  ManualClock clock;
  AmdSim sim(clock, true);
  ASSERT_EQ(sim.init(options_for(fixture_scenario("amd-counter64"))), AmdResult::Ok);
  clock.set_scenario_s(100);
  AmdReading a;
  ASSERT_EQ(sim.read(0, a), AmdResult::Ok);
  clock.set_scenario_s(110);
  AmdReading b;
  ASSERT_EQ(sim.read(0, b), AmdResult::Ok);
  const double joules =
      static_cast<double>(b.energy_count - a.energy_count) * amd::kEnergyResolutionUj / 1e6;
  const double seconds = static_cast<double>(b.timestamp_ns - a.timestamp_ns) / 1e9;
  EXPECT_DOUBLE_EQ(seconds, 10.0);
  EXPECT_NEAR(joules / seconds, b.average_power_w, 0.05 * b.average_power_w);
}

// A 32-bit accumulator holds the 64-bit one's low bits and wraps every 2^32 counts (65.7 kJ):
// within ten minutes of an MI300X under load the counter goes back to a smaller value once, and
// the difference modulo 2^32 is still the energy.
TEST(AmdSim, A32BitAccumulatorWrapsAround) {
  ManualClock clock;
  AmdSim wide(clock, true);
  AmdSim narrow(clock, true);
  ASSERT_EQ(wide.init(options_for(fixture_scenario("amd-counter64"))), AmdResult::Ok);
  ASSERT_EQ(narrow.init(options_for(fixture_scenario("amd-counter32"))), AmdResult::Ok);
  constexpr std::uint64_t kWrap = std::uint64_t{1} << 32U;
  AmdReading wide_before, narrow_before;
  ASSERT_EQ(wide.read(0, wide_before), AmdResult::Ok);
  ASSERT_EQ(narrow.read(0, narrow_before), AmdResult::Ok);
  int wraps = 0;
  for (int step = 1; step <= 60; ++step) {
    clock.set_scenario_s(10.0 * step);
    AmdReading wide_now, narrow_now;
    ASSERT_EQ(wide.read(0, wide_now), AmdResult::Ok);
    ASSERT_EQ(narrow.read(0, narrow_now), AmdResult::Ok);
    ASSERT_LT(narrow_now.energy_count, kWrap);
    EXPECT_EQ(narrow_now.energy_count, wide_now.energy_count % kWrap);
    if (narrow_now.energy_count < narrow_before.energy_count) ++wraps;
    const std::uint64_t delta = (narrow_now.energy_count - narrow_before.energy_count) % kWrap;
    EXPECT_EQ(delta, wide_now.energy_count - wide_before.energy_count);
    wide_before = wide_now;
    narrow_before = narrow_now;
  }
  EXPECT_GE(wraps, 1);
}

TEST(AmdSim, PowerCapsAreCheckedAndNeedPrivileges) {
  ManualClock clock;
  AmdSim sim(clock, false);
  ASSERT_EQ(sim.init(options_for(shipped_scenario("mi300x"))), AmdResult::Ok);
  std::uint64_t cap = 0;
  ASSERT_EQ(sim.power_cap_uw(0, cap), AmdResult::Ok);
  EXPECT_EQ(cap, 750'000'000U);
  EXPECT_EQ(sim.set_power_cap_uw(0, 100'000'000), AmdResult::OutOfBounds);
  EXPECT_EQ(sim.set_power_cap_uw(0, 500'000'000), AmdResult::Ok);
  ASSERT_EQ(sim.power_cap_uw(0, cap), AmdResult::Ok);
  EXPECT_EQ(cap, 500'000'000U);

  AmdSim user(clock, false);
  ASSERT_EQ(user.init(options_for(shipped_scenario("mi300x"), /*privileged=*/false)),
            AmdResult::Ok);
  EXPECT_EQ(user.set_power_cap_uw(0, 500'000'000), AmdResult::NoPerm);
}

TEST(AmdSim, TheAmdObjectRemovesALibraryOrFailsInit) {
  ManualClock clock;
  AmdSim amd_smi(clock, false);
  EXPECT_EQ(amd_smi.init(options_for(fixture_scenario("amd-rocm-only"))), AmdResult::Load);
  EXPECT_THAT(amd_smi.last_error(), HasSubstr("no AMD SMI"));
  AmdSim rocm_smi(clock, true);
  EXPECT_EQ(rocm_smi.init(options_for(fixture_scenario("amd-rocm-only"))), AmdResult::Ok);
  AmdSim denied(clock, true);
  EXPECT_EQ(denied.init(options_for(fixture_scenario("amd-permission"))), AmdResult::NoPerm);
  AmdSim no_driver(clock, false);
  EXPECT_EQ(no_driver.init(options_for(fixture_scenario("amd-driver-not-loaded"))),
            AmdResult::DriverNotLoaded);
}

TEST(AmdSim, AnNvidiaScenarioHasNoAmdDevice) {
  ManualClock clock;
  AmdSim sim(clock, false);
  ASSERT_EQ(sim.init(options_for(shipped_scenario("h100"))), AmdResult::Ok);
  std::uint32_t count = 1;
  ASSERT_EQ(sim.count(count), AmdResult::Ok);
  EXPECT_EQ(count, 0U);
}

TEST(AmdScenario, MistakesAreRejectedWithTheirPointer) {
  EXPECT_THAT(parse_error(R"({"phases": [{"name": "idle", "duration_s": 1}],
                              "amd_gpus": [{"model": "MI100"}]})"),
              HasSubstr("/amd_gpus/0/model: unknown AMD model \"MI100\"; built-in AMD models: "
                        "MI250X, MI300X"));
  EXPECT_THAT(parse_error(R"({"phases": [{"name": "idle", "duration_s": 1}],
                              "amd_gpus": [{"model": "MI250X", "gcds": [{}]}]})"),
              HasSubstr("/amd_gpus/0/gcds: an MI250X card has 2 GCDs"));
  EXPECT_THAT(parse_error(R"({"phases": [{"name": "idle", "duration_s": 1}],
                              "amd_gpus": [{"model": "MI300X", "energy_counter_bits": 48}]})"),
              HasSubstr("/amd_gpus/0/energy_counter_bits: must be 32 or 64"));
  EXPECT_THAT(parse_error(R"({"phases": [{"name": "idle", "duration_s": 1}],
                              "amd": {"init_error": "nope"}, "amd_gpus": [{"model": "MI300X"}]})"),
              HasSubstr("/amd/init_error: \"nope\" is not one of"));
  EXPECT_THAT(parse_error(R"({"phases": [{"name": "idle", "duration_s": 1}]})"),
              HasSubstr("missing required key \"gpus\" (NVIDIA GPUs) or \"amd_gpus\""));
}

}  // namespace
}  // namespace gpuscope::sim
