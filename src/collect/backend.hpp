// Chooses the NVML library gpuscope talks to: the real driver, a library named by the user, or
// the simulated GPUs of a scenario (--simulate).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "nvml/library.hpp"

namespace gpuscope::collect {

struct BackendOptions {
  std::string nvml_library;  // --nvml-library (else env GPUSCOPE_NVML_LIBRARY, else the system)
  std::string simulate;      // --simulate: a shipped scenario's name or a scenario file's path
};

struct ScenarioInfo {
  std::string name;
  std::string description;
  std::filesystem::path path;
  std::size_t gpu_count = 0;
};

// Loads the library `options` asks for. For --simulate it resolves the scenario, points the
// simulated library at it (GPUSCOPE_SIM_SCENARIO, inherited by the wrapped job) and loads
// libgpuscope-sim-nvml.so through the same dlopen path as a real driver. Throws Error.
std::shared_ptr<const nvml::Library> open_backend(const BackendOptions& options);

// The scenario file `name_or_path` refers to: a path if it names an existing file or ends in
// .json, else a shipped scenario by name. Throws Error listing the shipped ones when unknown.
std::filesystem::path resolve_scenario(const std::string& name_or_path);

// The shipped scenarios (share/gpuscope/scenarios, or GPUSCOPE_SCENARIO_PATH), sorted by name.
std::vector<ScenarioInfo> shipped_scenarios();

// Directory of the shipped scenarios.
std::filesystem::path scenario_dir();

}  // namespace gpuscope::collect
