// Shared helpers for the simulated-GPU model tests.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sim/clock.hpp"
#include "sim/scenario.hpp"
#include "sim/scenario_parser.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::sim::testing {

// A clock the test moves by hand; realtime and monotonic advance together.
class ManualClock final : public Clock {
 public:
  static constexpr std::int64_t kStart = 1'700'000'000'000'000'000;  // 2023-11-14, arbitrary
  std::int64_t realtime_ns() const override { return now_; }
  std::int64_t monotonic_ns() const override { return now_ - kStart + 1'000'000'000; }
  void advance_ns(std::int64_t ns) { now_ += ns; }
  // Sets scenario time for a driver whose epoch is kStart and time scale 1.
  void set_scenario_s(double seconds) {
    now_ = kStart + static_cast<std::int64_t>(seconds * 1e9 + 0.5);
  }

 private:
  std::int64_t now_ = kStart;
};

// The suites' one temporary-directory helper (tests/support/temp_dir.hpp).
using ::gpuscope::testing::TempDir;

inline std::string shipped_scenario(std::string_view name) {
  return std::string(GPUSCOPE_SIM_SCENARIO_DIR) + "/" + std::string(name) + ".json";
}

inline std::string fixture_scenario(std::string_view name) {
  return std::string(GPUSCOPE_SIM_FIXTURE_DIR) + "/" + std::string(name) + ".json";
}

// Parses a scenario that must be valid, failing the test (with the parser's message) if not.
inline Scenario must_parse(std::string_view json, const std::string& path = "test.json") {
  auto scenario = parse_scenario(json, path);
  if (!scenario) ADD_FAILURE() << scenario.error();
  return scenario ? std::move(*scenario) : Scenario{};
}

inline Scenario must_load(const std::string& path) {
  auto scenario = load_scenario(path);
  if (!scenario) ADD_FAILURE() << scenario.error();
  return scenario ? std::move(*scenario) : Scenario{};
}

// The parse error of a scenario that must be invalid.
inline std::string parse_error(std::string_view json) {
  auto scenario = parse_scenario(json, "bad.json");
  EXPECT_FALSE(scenario.has_value()) << "the scenario was accepted";
  return scenario ? std::string() : scenario.error();
}

}  // namespace gpuscope::sim::testing
