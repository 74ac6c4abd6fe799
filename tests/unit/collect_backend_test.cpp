// Choosing the NVML library and finding scenarios.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "collect/backend.hpp"
#include "support/process.hpp"

namespace gpuscope::collect {
namespace {

class ScenarioPath : public ::testing::Test {
 protected:
  void SetUp() override { setenv("GPUSCOPE_SCENARIO_PATH", GPUSCOPE_TEST_SCENARIO_DIR, 1); }
  void TearDown() override { unsetenv("GPUSCOPE_SCENARIO_PATH"); }
};

TEST_F(ScenarioPath, ShippedScenarioResolvesByName) {
  auto path = resolve_scenario("h100");
  EXPECT_EQ(path.filename(), "h100.json");
  EXPECT_TRUE(std::filesystem::exists(path));
}

TEST_F(ScenarioPath, ExistingFileResolvesByPath) {
  testing::TempDir dir;
  const auto file = dir.file("mine.json");
  std::ofstream(file) << "{}";
  EXPECT_EQ(resolve_scenario(file), file);
}

TEST_F(ScenarioPath, UnknownNameListsTheShippedOnes) {
  try {
    resolve_scenario("h1000");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    const std::string text = e.what();
    EXPECT_NE(text.find("unknown scenario 'h1000'"), std::string::npos) << text;
    EXPECT_NE(text.find("h100x4-straggler"), std::string::npos) << text;
  }
}

TEST_F(ScenarioPath, MissingFileIsAUsageError) {
  try {
    resolve_scenario("/tmp/does-not-exist/scenario.json");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos);
  }
}

TEST_F(ScenarioPath, ShippedScenariosAreListedWithDescriptions) {
  const auto scenarios = shipped_scenarios();
  ASSERT_GE(scenarios.size(), 5U);
  for (const auto& s : scenarios) {
    EXPECT_FALSE(s.description.empty()) << s.name;
  }
  EXPECT_TRUE(std::is_sorted(scenarios.begin(), scenarios.end(),
                             [](const auto& a, const auto& b) { return a.name < b.name; }));
}

// The NVIDIA and AMD set-ups both go through use_simulated_scenario, which points the
// simulated libraries (and the wrapped job) at the scenario's absolute path.
TEST_F(ScenarioPath, OneSetUpPointsEverySimulatedLibraryAtTheScenario) {
  const char* before = std::getenv("GPUSCOPE_SIM_SCENARIO");
  const std::string saved = before != nullptr ? before : "";
  unsetenv("GPUSCOPE_SIM_SCENARIO");
  const auto path = use_simulated_scenario("h100");
  EXPECT_TRUE(path.is_absolute());
  EXPECT_EQ(path, std::filesystem::absolute(resolve_scenario("h100")));
  const char* set = std::getenv("GPUSCOPE_SIM_SCENARIO");
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(std::string(set), path.string());
  EXPECT_THROW(use_simulated_scenario("h1000"), Error);
  if (before != nullptr) {
    setenv("GPUSCOPE_SIM_SCENARIO", saved.c_str(), 1);
  } else {
    unsetenv("GPUSCOPE_SIM_SCENARIO");
  }
  setenv("GPUSCOPE_SIM_AMD_SMI_LIBRARY", "/opt/x/libsim.so", 1);
  EXPECT_EQ(simulated_library("GPUSCOPE_SIM_AMD_SMI_LIBRARY", "libgpuscope-sim-amdsmi.so"),
            "/opt/x/libsim.so");
  unsetenv("GPUSCOPE_SIM_AMD_SMI_LIBRARY");
  EXPECT_EQ(std::filesystem::path(
                simulated_library("GPUSCOPE_SIM_AMD_SMI_LIBRARY", "libgpuscope-sim-amdsmi.so"))
                .filename(),
            "libgpuscope-sim-amdsmi.so");
}

TEST(Backend, SimulateAndNvmlLibraryAreExclusive) {
  try {
    BackendOptions options;
    options.nvml_library = "/some/libnvidia-ml.so.1";
    options.simulate = "h100";
    open_backend(options);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
  }
}

TEST(Backend, NvmlLibraryFromEnvironment) {
  setenv("GPUSCOPE_NVML_LIBRARY", "/nonexistent/from-env/libnvidia-ml.so.1", 1);
  try {
    open_backend({});
    unsetenv("GPUSCOPE_NVML_LIBRARY");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    unsetenv("GPUSCOPE_NVML_LIBRARY");
    EXPECT_NE(std::string(e.what()).find("/nonexistent/from-env"), std::string::npos);
  }
}

}  // namespace
}  // namespace gpuscope::collect
