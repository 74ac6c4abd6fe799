// Points the simulated library at a scenario for one test, with a private state file, and puts
// the environment back afterwards.
#pragma once

#include <cstdlib>
#include <string>

#include "support/process.hpp"

namespace gpuscope::testing {

class SimEnvironment {
 public:
  explicit SimEnvironment(const std::string& scenario_file) {
    setenv("GPUSCOPE_SIM_SCENARIO", scenario_file.c_str(), 1);
    setenv("GPUSCOPE_SIM_STATE", dir_.file("state.json").c_str(), 1);
  }
  ~SimEnvironment() {
    unsetenv("GPUSCOPE_SIM_SCENARIO");
    unsetenv("GPUSCOPE_SIM_STATE");
  }
  SimEnvironment(const SimEnvironment&) = delete;
  SimEnvironment& operator=(const SimEnvironment&) = delete;

  static std::string shipped(const std::string& name) {
    return std::string(GPUSCOPE_TEST_SCENARIO_DIR) + "/" + name + ".json";
  }
  static std::string fixture(const std::string& name) {
    return std::string(GPUSCOPE_TEST_FIXTURE_SCENARIO_DIR) + "/" + name + ".json";
  }
  const std::string& dir() const { return dir_.path(); }

 private:
  TempDir dir_;
};

}  // namespace gpuscope::testing
