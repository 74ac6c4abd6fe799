// What each call of the simulated libraries costs (docs/scenarios.md, "Driver costs"): a real
// driver does not answer in 135 ns. On an NVIDIA H200 (driver 580) the energy counter costs 3.84
// ms a call, a GPM sample 34 µs, the MIG-mode check 162 µs (docs/validation.md); the "h200" table
// holds those measurements, so that tests and benchmarks can run against a driver as slow as the
// real one. A scenario names a table ("driver_costs": "h200") or refines one; the environment
// variable GPUSCOPE_SIM_DRIVER_COSTS replaces the scenario's choice (for the benchmarks).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace gpuscope::sim {

// How the slow calls of the simulated driver wait for one another: each GPU's calls take turns
// (Gpu, the default: the driver talks to each GPU's firmware in turn), every call of the node
// takes turns (Node: a driver with one lock), or calls overlap freely (None).
enum class CostWaits { Gpu, Node, None };

struct DriverCosts {
  std::string name = "none";  // the table it started from: "none" or "h200"
  // Per exported symbol, of any simulated library: "nvmlDeviceGetTotalEnergyConsumption",
  // "dcgmEntitiesGetLatestValues", "amdsmi_get_energy_count", "rsmi_dev_power_ave_get". An NVML
  // entry's every symbol (its _v2 and older names) is charged the same.
  std::map<std::string, std::int64_t, std::less<>> call_ns;
  // nvmlDeviceGetFieldValues: per field id. A request costs its slowest field (on the H200 the
  // fields 83, 185 and 186 together took 3.85 ms, field 83 alone 3.84 ms): the driver gathers the
  // fields of one request together.
  std::map<unsigned, std::int64_t> field_ns;
  CostWaits waits = CostWaits::Gpu;

  bool empty() const { return call_ns.empty() && field_ns.empty(); }
  // The cost of a call by any of its symbols (0 when the table does not list it).
  std::int64_t of_call(std::string_view symbol) const;
  // The cost of one nvmlDeviceGetFieldValues request over these field ids.
  template <class Ids>
  std::int64_t of_fields(const Ids& ids) const {
    std::int64_t most = 0;
    if (field_ns.empty()) return 0;
    for (unsigned id : ids) {
      if (const auto it = field_ns.find(id); it != field_ns.end() && it->second > most) {
        most = it->second;
      }
    }
    return most;
  }
};

// A named table: "none" (every call as fast as the simulator is) or "h200", optionally with its
// waits after a colon ("h200:node"); nullopt for anything else.
std::optional<DriverCosts> driver_costs_named(std::string_view name);

// The scenario's "driver_costs": a table's name, or an object {"base", "calls_ms", "fields_ms",
// "waits"}. Names are checked against the libraries' entry points (a typo is an error with a
// suggestion). Throws ScenarioError naming the JSON pointer.
DriverCosts parse_driver_costs(const nlohmann::json& value, const std::string& pointer);

// Spends ns as the driver would, after the call's work: calls under 20 µs spin, longer ones sleep.
// The real H200 driver spins for the whole of every call (its 3-4 ms energy read takes as much
// CPU as wall time, docs/validation.md); sleeping instead lets a 2-core machine stand for a node
// of many cores, and spent_ns() says how much CPU the real driver would have burnt. `gpu` is the
// GPU the call was about (nullopt: none), for costs' waits.
void spend_call_cost(CostWaits waits, std::int64_t ns, std::optional<unsigned> gpu);

// Every nanosecond charged by spend_call_cost in this process so far.
std::int64_t spent_ns();

// What a call of another library costs (DCGM, AMD SMI, ROCm SMI), taken under its library's lock
// and spent after it: a plain pair, so no table is read once the lock is gone.
struct CallCost {
  std::int64_t ns = 0;
  CostWaits waits = CostWaits::Gpu;
};
inline CallCost call_cost(const DriverCosts& costs, std::string_view symbol) {
  return {costs.of_call(symbol), costs.waits};
}

}  // namespace gpuscope::sim
