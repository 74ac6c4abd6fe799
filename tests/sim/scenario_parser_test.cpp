// The scenario parser accepts the shipped scenarios and rejects mistakes with precise messages.
#include "sim/scenario_parser.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include "sim/json_reader.hpp"
#include "sim/parse_parts.hpp"
#include "test_support.hpp"

namespace gpuscope::sim {
namespace {

using ::testing::HasSubstr;
using testing::must_parse;
using testing::parse_error;

constexpr std::string_view kMinimal = R"({
  "name": "minimal",
  "phases": [{"name": "idle", "duration_s": 1}],
  "gpus": [{"model": "H100-SXM5-80GB"}]
})";

TEST(ScenarioParser, AcceptsEveryShippedScenario) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(GPUSCOPE_SIM_SCENARIO_DIR)) {
    if (entry.path().extension() != ".json") continue;
    const Scenario scenario = testing::must_load(entry.path().string());
    EXPECT_EQ(scenario.name, entry.path().stem().string()) << "name must match the file name";
    EXPECT_FALSE(scenario.description.empty()) << entry.path();
    ++count;
  }
  EXPECT_GE(count, 5);
}

TEST(ScenarioParser, AppliesModelDefaults) {
  const Scenario scenario = must_parse(kMinimal);
  ASSERT_EQ(scenario.gpus.size(), 1U);
  const GpuConfig& gpu = scenario.gpus[0];
  EXPECT_EQ(gpu.spec.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpu.spec.memory_mib, 81559U);
  EXPECT_EQ(gpu.spec.power.max_w, 700);
  EXPECT_EQ(gpu.pci_bus_id, "00000000:18:00.0");
  EXPECT_EQ(scenario.time_scale, 1.0);
  EXPECT_TRUE(scenario.privileged);
  EXPECT_EQ(scenario.nvml_version, "12.550.54.15");
}

TEST(ScenarioParser, DefaultUuidsAreDeterministicWellFormedAndDistinct) {
  EXPECT_EQ(default_uuid(5, 0), default_uuid(5, 0));
  EXPECT_NE(default_uuid(5, 0), default_uuid(6, 0));
  const std::string uuid = default_uuid(5, 3);
  ASSERT_EQ(uuid.size(), 40U);  // GPU- + 8-4-4-4-12
  EXPECT_EQ(uuid.substr(0, 4), "GPU-");
  for (std::size_t dash : {12U, 17U, 22U, 27U}) EXPECT_EQ(uuid[dash], '-') << uuid;
  const Scenario scenario = testing::must_load(testing::shipped_scenario("h100x8-idle-start"));
  std::set<std::string> uuids, buses;
  for (const GpuConfig& gpu : scenario.gpus) {
    uuids.insert(gpu.uuid);
    buses.insert(gpu.pci_bus_id);
  }
  EXPECT_EQ(uuids.size(), 8U);
  EXPECT_EQ(buses.size(), 8U);
}

TEST(ScenarioParser, CountTemplateAndOverridesExpand) {
  const Scenario scenario = testing::must_load(testing::shipped_scenario("h100x4-straggler"));
  ASSERT_EQ(scenario.gpus.size(), 4U);
  EXPECT_EQ(scenario.gpus[0].activity_scale, 1.0);
  EXPECT_EQ(scenario.gpus[3].activity_scale, 0.57);
  // The fast GPUs repeat compute/communication 8 times; the straggler computes throughout.
  EXPECT_EQ(scenario.gpus[0].phases.size(), 2U + 16U + 2U);
  EXPECT_EQ(scenario.gpus[0].phases[3].name, "communication");
  EXPECT_EQ(scenario.gpus[3].phases.size(), 5U);
}

TEST(ScenarioParser, RejectsUnknownKeysWithPointerAndSuggestion) {
  const std::string error = parse_error(R"({"phases": [{"name": "idle", "duration_s": 1}],
      "gpus": [{"model": "H100-SXM5-80GB", "pwoer": {"max_w": 500}}]})");
  EXPECT_THAT(error, HasSubstr("scenario bad.json: /gpus/0: unknown key \"pwoer\""));
  EXPECT_THAT(error, HasSubstr("did you mean \"power\"?"));
  EXPECT_THAT(parse_error(R"({"phases": [{"name": "idle", "duration_s": 1, "utl": 5}],
      "gpus": [{"model": "H100-SXM5-80GB"}]})"),
              HasSubstr("/phases/0: unknown key \"utl\" (did you mean \"util\"?)"));
  EXPECT_THAT(parse_error(R"({"seeed": 1, "gpus": []})"), HasSubstr("unknown key \"seeed\""));
}

TEST(ScenarioParser, RejectsBadRangesNamingBothBounds) {
  const std::string error = testing::parse_error(R"({
    "phases": [{"name": "idle", "duration_s": 1}],
    "gpus": [{"model": "H100-SXM5-80GB"}, {"model": "H100-SXM5-80GB"},
             {"model": "H100-SXM5-80GB", "power": {"min_w": 800}}]})");
  EXPECT_THAT(error, HasSubstr("/gpus/2/power/min_w: 800 W must be <= max_w (700 W)"));
  EXPECT_THAT(parse_error(R"({"phases": [{"name": "c", "duration_s": 1, "util": 120}],
      "gpus": [{"model": "H100-SXM5-80GB"}]})"),
              HasSubstr("/phases/0/util: 120 is out of range: must be >= 0 and <= 100"));
  EXPECT_THAT(parse_error(R"({"phases": [{"name": "c", "duration_s": 0}],
      "gpus": [{"model": "H100-SXM5-80GB"}]})"),
              HasSubstr("/phases/0/duration_s: 0 is out of range: must be > 0"));
  EXPECT_THAT(parse_error(R"({"time_scale": "fast", "phases": [{"name": "c", "duration_s": 1}],
      "gpus": [{"model": "H100-SXM5-80GB"}]})"),
              HasSubstr("/time_scale: expected a number, got string"));
}

TEST(ScenarioParser, RejectsPhasesThatDoNotFitTheGpu) {
  EXPECT_THAT(parse_error(R"({"phases": [{"name": "c", "duration_s": 1, "memory_used_gib": 90}],
      "gpus": [{"model": "H100-SXM5-80GB"}]})"),
              HasSubstr("does not fit in 81559 MiB"));
  EXPECT_THAT(parse_error(R"({"phases": [{"name": "c", "duration_s": 1, "power_w": 450}],
      "gpus": [{"model": "A100-SXM4-80GB"}]})"),
              HasSubstr("power_w 450 must lie between idle_w (55) and max_w (400)"));
}

TEST(ScenarioParser, RejectsMissingPhasesAndUnknownModels) {
  EXPECT_THAT(parse_error(R"({"gpus": [{"model": "H100-SXM5-80GB"}]})"),
              HasSubstr("/gpus/0: no phases"));
  EXPECT_THAT(parse_error(R"({"phases": [], "gpus": [{"model": "H100-SXM5-80GB"}]})"),
              HasSubstr("/phases: a phase list needs at least one phase"));
  const std::string error = parse_error(R"({"phases": [{"name": "i", "duration_s": 1}],
      "gpus": [{"model": "H100-SXM5"}]})");
  EXPECT_THAT(error, HasSubstr("/gpus/0/model: unknown model \"H100-SXM5\""));
  EXPECT_THAT(error, HasSubstr("A100-SXM4-80GB"));
  EXPECT_THAT(parse_error(R"({"phases": [{"name": "i", "duration_s": 1}],
      "gpus": [{"model": "H100-SXM5-80GB", "phases": "train"}]})"),
              HasSubstr("no phase set named \"train\""));
}

TEST(ScenarioParser, RejectsUnknownFunctionNamesInFaults) {
  EXPECT_THAT(parse_error(R"({"faults": {"not_supported": ["nvmlDeviceGetPowerUsge"]},
      "phases": [{"name": "i", "duration_s": 1}], "gpus": [{"model": "H100-SXM5-80GB"}]})"),
              HasSubstr("/faults/not_supported/0: unknown NVML function \"nvmlDeviceGetPowerUsge\" "
                        "(did you mean \"nvmlDeviceGetPowerUsage\"?)"));
}

TEST(ScenarioParser, FaultsAcceptSymbolsAndIdsAndMergeGlobalIntoGpu) {
  const Scenario scenario = must_parse(R"({
    "faults": {"not_supported": ["nvmlDeviceGetCount_v2"], "latency_ms": {"*": 2}},
    "phases": [{"name": "i", "duration_s": 1}],
    "gpus": [{"model": "H100-SXM5-80GB",
              "faults": {"not_supported": ["DeviceGetPowerUsage"], "lost_at_s": 3,
                         "latency_ms": {"nvmlDeviceGetName": 7}}}]})");
  const FaultSpec& faults = scenario.gpus[0].faults;
  EXPECT_TRUE(faults.not_supported.test(static_cast<std::size_t>(Entry::DeviceGetCount)));
  EXPECT_TRUE(faults.not_supported.test(static_cast<std::size_t>(Entry::DeviceGetPowerUsage)));
  EXPECT_FALSE(faults.not_supported.test(static_cast<std::size_t>(Entry::DeviceGetName)));
  EXPECT_EQ(faults.latency_us[static_cast<std::size_t>(Entry::DeviceGetName)], 7000U);
  EXPECT_EQ(faults.latency_us[static_cast<std::size_t>(Entry::DeviceGetUUID)], 2000U);
  EXPECT_EQ(faults.lost_at_s, 3.0);
}

TEST(ScenarioParser, ReportsJsonSyntaxErrorsWithTheFile) {
  auto scenario = load_scenario(testing::fixture_scenario("malformed"));
  ASSERT_FALSE(scenario);
  EXPECT_THAT(scenario.error(), HasSubstr("malformed.json: invalid JSON"));
  EXPECT_THAT(scenario.error(), HasSubstr("line 4"));
  auto missing = load_scenario("/nonexistent/x.json");
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error(), HasSubstr("scenario /nonexistent/x.json: cannot open the file"));
}

TEST(ScenarioParser, FixturesFailWithTheirIntendedErrors) {
  auto unknown = load_scenario(testing::fixture_scenario("unknown-key"));
  ASSERT_FALSE(unknown);
  EXPECT_THAT(unknown.error(), HasSubstr("unknown key \"pwoer\""));
  auto range = load_scenario(testing::fixture_scenario("bad-range"));
  ASSERT_FALSE(range);
  EXPECT_THAT(range.error(), HasSubstr("/gpus/2/power/min_w"));
}

TEST(ScenarioParser, StateFileIsRelativeToTheScenario) {
  const Scenario scenario = must_parse(R"({"state_file": "state/x.json",
      "phases": [{"name": "i", "duration_s": 1}], "gpus": [{"model": "GH200"}]})",
                                       "/some/dir/s.json");
  EXPECT_EQ(scenario.state_file, "/some/dir/state/x.json");
  EXPECT_TRUE(scenario.gpus[0].spec.module_power);
}

// `depth` repeat blocks, each inside the last, around one phase.
std::string nested_repeats(std::size_t depth) {
  std::string phases = R"([{"name": "p", "duration_s": 1}])";
  std::string open, close;
  for (std::size_t i = 0; i < depth; ++i) {
    open += R"([{"repeat": 1, "phases": )";
    close += "}]";
  }
  return R"({"gpus": [{"model": "H100-SXM5-80GB"}], "phases": )" + open + phases + close + "}";
}

// 15,000 nested repeat blocks overflowed the stack (SIGSEGV) and 10,000 took 8 s and 1.6 GB.
TEST(ScenarioParser, RefusesNestingPastTheLimitBeforeParsing) {
  const std::string error = parse_error(nested_repeats(15'000));
  EXPECT_THAT(error, HasSubstr("scenario bad.json: JSON nested deeper than 64 levels"));
  EXPECT_THAT(parse_error(nested_repeats(40)), HasSubstr("nested deeper than 64"));
  // A realistic nesting still works: 3 levels of repeats.
  EXPECT_EQ(must_parse(nested_repeats(3)).gpus.at(0).phases.size(), 1U);
}

TEST(ScenarioParser, NestingScanSkipsBracketsInStrings) {
  EXPECT_EQ(nesting_past(R"({"a": "[[[[[[", "b": [1, [2]]})", 3), std::nullopt);
  EXPECT_EQ(nesting_past(R"({"a": "\"[[[", "b": [[1]]})", 2), std::optional<std::size_t>(21));
  EXPECT_EQ(nesting_past("[[[", 3), std::nullopt);
  EXPECT_EQ(nesting_past("[[[[", 3), std::optional<std::size_t>(3));
}

// A phase set of 10,000 phases (the limit of one list) named s<i>.
std::string fmt_set(int i) {
  return "\"s" + std::to_string(i) +
         R"(": [{"repeat": 10000, "phases": [{"name": "p", "duration_s": 1}]}])";
}

// Phase sets each just under the per-list limit once multiplied memory without bound.
TEST(ScenarioParser, RefusesMoreThanTheTotalPhaseBudget) {
  std::string sets;
  for (int i = 0; i < 11; ++i) {
    sets += (i == 0 ? "" : ", ") + fmt_set(i);
  }
  const std::string error = parse_error(
      R"({"gpus": [{"model": "H100-SXM5-80GB", "phases": "s0"}], "phase_sets": {)" + sets + "}}");
  EXPECT_THAT(error, HasSubstr("expands past 100000 phases in all"));
}

TEST(ScenarioParser, RefusesAFileLargerThanTheCap) {
  const std::string big = std::string(kMaxScenarioBytes, ' ') + std::string(kMinimal);
  EXPECT_THAT(parse_error(big), HasSubstr("is larger than 4 MiB"));
  testing::TempDir dir;
  const std::string path = dir.file("big.json");
  std::ofstream(path) << big;
  const auto loaded = load_scenario(path);
  ASSERT_FALSE(loaded.has_value());
  EXPECT_THAT(loaded.error(), HasSubstr("is larger than 4 MiB"));
}

// A scenario path naming a device or a FIFO must fail at once, not read forever or block.
TEST(ScenarioParser, RefusesAScenarioThatIsNotARegularFile) {
  testing::TempDir dir;
  const std::string fifo = dir.file("scenario.json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {std::string("/dev/zero"), std::string("/dev/urandom"), fifo}) {
    const auto loaded = load_scenario(path);
    ASSERT_FALSE(loaded.has_value()) << path;
    EXPECT_THAT(loaded.error(), HasSubstr("scenario " + path + ": is not a regular file"));
  }
}

}  // namespace
}  // namespace gpuscope::sim
