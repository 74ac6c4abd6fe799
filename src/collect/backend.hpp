// Chooses the NVML library gpuscope talks to: the real driver, a library named by the user, or
// the simulated GPUs of a scenario (--simulate).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "dcgm/library.hpp"
#include "nvml/library.hpp"

namespace gpuscope::collect {

struct BackendOptions {
  std::string nvml_library;  // --nvml-library (else env GPUSCOPE_NVML_LIBRARY, else the system)
  std::string simulate;      // --simulate: a shipped scenario's name or a scenario file's path
  // Where the saturation metrics come from (docs/sources.md): auto, gpm or dcgm.
  std::string metrics_source = "auto";
  // How to reach DCGM: auto, embedded, hostengine, or a host engine's address (dcgm/session.hpp).
  std::string dcgm = "auto";
  std::string dcgm_library;  // --dcgm-library (else env GPUSCOPE_DCGM_LIBRARY, else the system)
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

// Loads the DCGM library `options` asks for: the simulated libdcgm with --simulate (same
// scenario), else --dcgm-library, GPUSCOPE_DCGM_LIBRARY or the system's libdcgm.so.4/.so.3.
// Throws Error when there is none.
std::shared_ptr<const dcgm::Library> open_dcgm_library(const BackendOptions& options);

// The one set-up of a simulated machine, for every vendor's simulated library: resolves the
// scenario (resolve_scenario), sets GPUSCOPE_SIM_SCENARIO to its absolute path (the simulated
// libraries read it when initialised; the wrapped job inherits it, so a cooperating workload
// sees the same GPUs) and returns that path. Throws Error as resolve_scenario does.
std::filesystem::path use_simulated_scenario(const std::string& name_or_path);

// A simulated library: the path in `variable` when set, else `file_name` in gpuscope's private
// library folder.
std::string simulated_library(const char* variable, const char* file_name);

// The scenario file `name_or_path` refers to: a path if it names an existing file or ends in
// .json, else a shipped scenario by name. Throws Error listing the shipped ones when unknown.
std::filesystem::path resolve_scenario(const std::string& name_or_path);

// The shipped scenarios (share/gpuscope/scenarios, or GPUSCOPE_SCENARIO_PATH), sorted by name.
std::vector<ScenarioInfo> shipped_scenarios();

// Directory of the shipped scenarios.
std::filesystem::path scenario_dir();

}  // namespace gpuscope::collect
