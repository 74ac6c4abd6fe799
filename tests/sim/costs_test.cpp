// The simulated libraries' call costs (sim/costs.hpp): the H200 table, a scenario's refinements and
// their errors, the environment's override, and what a call then takes. Timings are only ever
// lower bounds (a cost is never skipped); nothing asserts that anything was fast.
#include "sim/costs.hpp"

#include <chrono>
#include <fstream>
#include <thread>

#include "driver_harness.hpp"
#include "sim/amd_sim.hpp"
#include "sim/json_reader.hpp"

namespace gpuscope::sim {
namespace {

using testing::DriverHarness;
using ::testing::HasSubstr;

constexpr std::int64_t kUs = 1000;
constexpr std::int64_t kMs = 1000 * kUs;

// A one-GPU H100 scenario (two GPUs with `gpus`) whose "driver_costs" is `costs` (JSON text).
std::string scenario_with_costs(const testing::TempDir& dir, const std::string& costs,
                                int gpus = 1) {
  const std::string path = dir.file("costs-" + std::to_string(gpus) + ".json");
  std::ofstream(path) << R"({"name": "costs", "driver_costs": )" << costs
                      << R"(, "phases": [{"name": "busy", "duration_s": 60, "util": 100}],
    "gpus": {"count": )"
                      << gpus << R"(, "template": {"model": "H100-SXM5-80GB"}}})";
  return path;
}

template <class Call>
std::chrono::nanoseconds time_of(Call&& call) {
  const auto start = std::chrono::steady_clock::now();
  call();
  return std::chrono::steady_clock::now() - start;
}

TEST(DriverCosts, TheH200TableHoldsTheMeasuredCosts) {
  const auto h200 = driver_costs_named("h200");
  ASSERT_TRUE(h200);
  EXPECT_EQ(h200->of_call("nvmlDeviceGetTotalEnergyConsumption"), 3840 * kUs);
  EXPECT_EQ(h200->of_call("nvmlDeviceGetMigMode"), 162 * kUs);
  EXPECT_EQ(h200->of_call("nvmlGpmSampleGet") + h200->of_call("nvmlGpmMetricsGet"), 34 * kUs);
  // An entry's every symbol costs the same.
  EXPECT_EQ(h200->of_call("nvmlEventSetWait"), 4 * kUs);
  EXPECT_EQ(h200->of_call("nvmlEventSetWait_v2"), 4 * kUs);
  EXPECT_EQ(h200->of_call("nvmlDeviceGetPowerUsage"), 0);  // 272 ns: the simulator's own cost
  // A field request costs its slowest field: 83 + 185 + 186 took what 83 alone took.
  EXPECT_EQ(h200->of_fields(std::vector<unsigned>{186, 185, 83}), 3840 * kUs);
  EXPECT_EQ(h200->of_fields(std::vector<unsigned>{186}), 4 * kUs);  // timed alone: 3.5 µs
  EXPECT_EQ(h200->of_fields(std::vector<unsigned>{185}), 4 * kUs);  // not the driver's 763 µs
  EXPECT_EQ(h200->of_fields(std::vector<unsigned>{74, 75, 269}), 1420 * kUs);
  EXPECT_EQ(h200->waits, CostWaits::Gpu);
  EXPECT_TRUE(driver_costs_named("none")->empty());
  EXPECT_FALSE(driver_costs_named("h100"));
  EXPECT_EQ(driver_costs_named("h200:node")->waits, CostWaits::Node);
  EXPECT_EQ(driver_costs_named("h200:none")->waits, CostWaits::None);
  EXPECT_FALSE(driver_costs_named("h200:socket"));
}

TEST(DriverCosts, AScenarioRefinesATableForEveryLibrary) {
  const auto costs = parse_driver_costs(nlohmann::json::parse(R"({
      "base": "h200", "waits": "node",
      "calls_ms": {"nvmlDeviceGetPowerUsage": 0.5, "nvmlEventSetWait": 3,
                   "nvmlDeviceGetTotalEnergyConsumption": 1,
                   "dcgmEntitiesGetLatestValues": 0.05, "amdsmi_get_energy_count": 0.2,
                   "rsmi_dev_power_ave_get": 2.5},
      "fields_ms": {"185": 2, "1000": 0}})"),
                                        "/driver_costs");
  EXPECT_EQ(costs.name, "h200");
  EXPECT_EQ(costs.waits, CostWaits::Node);
  // Kept under the entry's newest symbol, and found by any of its symbols.
  EXPECT_EQ(costs.of_call("nvmlDeviceGetPowerUsage"), 500 * kUs);
  EXPECT_EQ(costs.of_call("nvmlEventSetWait_v2"), 3 * kMs);
  EXPECT_EQ(costs.of_call("nvmlDeviceGetTotalEnergyConsumption"), 1 * kMs);
  EXPECT_EQ(costs.of_call("nvmlDeviceGetMigMode"), 162 * kUs);  // from the base
  EXPECT_EQ(costs.of_call("dcgmEntitiesGetLatestValues"), 50 * kUs);
  EXPECT_EQ(costs.of_call("amdsmi_get_energy_count"), 200 * kUs);
  EXPECT_EQ(costs.of_call("rsmi_dev_power_ave_get"), 2500 * kUs);
  EXPECT_EQ(costs.of_fields(std::vector<unsigned>{185, 186}), 2 * kMs);
}

TEST(DriverCosts, MistakesAreRefusedWithTheirPlace) {
  const auto error = [](const char* text) {
    try {
      parse_driver_costs(nlohmann::json::parse(text), "/driver_costs");
    } catch (const ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(error(R"("h300")"), HasSubstr("/driver_costs: unknown cost table \"h300\""));
  EXPECT_THAT(error(R"({"calls_ms": {"nvmlDeviceGetPowerUsag": 1}})"),
              HasSubstr("/driver_costs/calls_ms/nvmlDeviceGetPowerUsag: unknown function"));
  EXPECT_THAT(error(R"({"calls_ms": {"nvmlDeviceGetPowerUsag": 1}})"),
              HasSubstr("did you mean \"nvmlDeviceGetPowerUsage\""));
  EXPECT_THAT(error(R"({"calls_ms": {"nvmlDeviceGetPowerUsage": -1}})"),
              HasSubstr("/driver_costs/calls_ms/nvmlDeviceGetPowerUsage"));
  EXPECT_THAT(error(R"({"fields_ms": {"power": 1}})"), HasSubstr("\"power\" is not a field id"));
  EXPECT_THAT(error(R"({"waits": "socket"})"), HasSubstr("\"gpu\", \"node\" or \"none\""));
  EXPECT_THAT(error(R"({"bases": "h200"})"), HasSubstr("/driver_costs"));
}

TEST(DriverCosts, ACallTakesItsCostAndAFieldRequestSaysIt) {
  DriverHarness harness;
  harness.init(scenario_with_costs(harness.dir(), R"("h200")"));
  unsigned long long millijoules = 0;
  EXPECT_GE(time_of([&] { DeviceGetTotalEnergyConsumption(harness.device(0), &millijoules); }),
            std::chrono::microseconds(3840));
  nvmlFieldValue_t values[2] = {};
  values[0].fieldId = nvml::kFieldPowerInstant;
  ASSERT_EQ(DeviceGetFieldValues(harness.device(0), 1, values), nvml::kSuccess);
  EXPECT_EQ(values[0].latencyUsec, 4);  // the instant power alone: 4 µs
  values[1].fieldId = nvml::kFieldTotalEnergyConsumption;
  EXPECT_GE(time_of([&] { DeviceGetFieldValues(harness.device(0), 2, values); }),
            std::chrono::microseconds(3840));
  EXPECT_EQ(values[0].latencyUsec, 3840);  // the request's: its slowest field
  EXPECT_EQ(values[1].latencyUsec, 3840);
}

TEST(DriverCosts, WhatWasChargedIsCountedForTheBenchmarksCpuFigure) {
  // The real driver spins through its calls; the simulator sleeps and counts what it charged.
  DriverHarness harness;
  harness.init(scenario_with_costs(harness.dir(), R"("h200")"));
  const std::int64_t before = spent_ns();
  unsigned long long millijoules = 0;
  DeviceGetTotalEnergyConsumption(harness.device(0), &millijoules);
  DeviceGetTotalEnergyConsumption(harness.device(0), &millijoules);
  EXPECT_EQ(spent_ns() - before, 2 * 3840 * kUs);
}

TEST(DriverCosts, TheEnvironmentReplacesTheScenariosTable) {
  DriverHarness harness;
  DriverOptions options = harness.options(scenario_with_costs(harness.dir(), R"("h200")"));
  options.driver_costs = "none";
  ASSERT_EQ(harness.driver().init(options), nvml::kSuccess);
  nvmlFieldValue_t value{};
  value.fieldId = nvml::kFieldTotalEnergyConsumption;
  ASSERT_EQ(DeviceGetFieldValues(harness.device(0), 1, &value), nvml::kSuccess);
  EXPECT_EQ(value.latencyUsec, 0);
}

// How long two threads take to read the energy counters of `a` and `b` at once.
std::chrono::nanoseconds two_counter_reads(nvmlDevice_t a, nvmlDevice_t b) {
  return time_of([&] {
    std::thread other([&] {
      unsigned long long mj = 0;
      DeviceGetTotalEnergyConsumption(b, &mj);
    });
    unsigned long long mj = 0;
    DeviceGetTotalEnergyConsumption(a, &mj);
    other.join();
  });
}

// Two threads reading one GPU's counter wait for each other (waits "gpu"): together they take
// at least both costs.
TEST(DriverCosts, OneGpusSlowCallsTakeTurns) {
  DriverHarness harness;
  harness.init(scenario_with_costs(harness.dir(), R"({"base": "h200", "waits": "gpu"})"));
  EXPECT_GE(two_counter_reads(harness.device(0), harness.device(0)),
            std::chrono::microseconds(2 * 3840));
}

TEST(DriverCosts, ANodeWideDriverMakesEveryGpuWait) {
  DriverHarness harness;
  harness.init(scenario_with_costs(harness.dir(), R"({"base": "h200", "waits": "node"})", 2));
  EXPECT_GE(two_counter_reads(harness.device(0), harness.device(1)),
            std::chrono::microseconds(2 * 3840));
}

TEST(DriverCosts, TheAmdAndDcgmLibrariesLearnTheirCosts) {
  testing::TempDir dir;
  const std::string path = dir.file("amd.json");
  std::ofstream(path) << R"({"name": "amd-costs", "phases": [{"name": "idle", "duration_s": 5}],
    "driver_costs": {"calls_ms": {"amdsmi_get_energy_count": 0.25, "rsmi_dev_power_ave_get": 0.5}},
    "amd_gpus": [{"model": "MI300X"}]})";
  testing::ManualClock clock;
  AmdSim amd(clock, /*rocm_smi=*/false);
  EXPECT_EQ(amd.call_cost_of("amdsmi_get_energy_count").ns, 0);  // before init: none
  DriverOptions options;
  options.scenario_path = path;
  options.state_path = dir.file("state.json");
  ASSERT_EQ(amd.init(options), AmdResult::Ok) << amd.last_error();
  EXPECT_EQ(amd.call_cost_of("amdsmi_get_energy_count").ns, 250 * kUs);
  EXPECT_EQ(amd.call_cost_of("rsmi_dev_power_ave_get").ns, 500 * kUs);
  EXPECT_EQ(amd.call_cost_of("amdsmi_get_power_info").ns, 0);
  EXPECT_GE(time_of([] { spend_call_cost(CostWaits::Gpu, 250 * kUs, std::nullopt); }),
            std::chrono::microseconds(250));

  DriverHarness harness;
  harness.init(
      scenario_with_costs(harness.dir(), R"({"calls_ms": {"dcgmEntitiesGetLatestValues": 0.05}})"));
  EXPECT_EQ(harness.driver().dcgm_call_cost("dcgmEntitiesGetLatestValues").ns, 50 * kUs);
  EXPECT_EQ(harness.driver().dcgm_call_cost("dcgmWatchFields").ns, 0);
}

}  // namespace
}  // namespace gpuscope::sim
