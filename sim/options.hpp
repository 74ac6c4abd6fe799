// The environment contract between gpuscope and the simulated library (docs/scenarios.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tl/expected.hpp>

namespace gpuscope::sim {

struct DriverOptions {
  std::optional<std::string> scenario_path;  // GPUSCOPE_SIM_SCENARIO
  std::optional<std::string> state_path;     // GPUSCOPE_SIM_STATE
  std::optional<bool> privileged;            // GPUSCOPE_SIM_PRIVILEGED (0 or 1)
  std::optional<std::int64_t> epoch_ns;      // GPUSCOPE_SIM_EPOCH_NS (CLOCK_REALTIME ns)
  std::optional<double> time_scale;          // GPUSCOPE_SIM_TIME_SCALE (> 0)
  // GPUSCOPE_SIM_DRIVER_COSTS: a cost table's name ("none", "h200") that replaces the scenario's
  // driver_costs (sim/costs.hpp).
  std::optional<std::string> driver_costs;
};

// Reads the GPUSCOPE_SIM_* variables; a malformed value is an error naming the variable.
tl::expected<DriverOptions, std::string> options_from_environment();

}  // namespace gpuscope::sim
