#include "sim/costs.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <ctime>
#include <mutex>
#include <thread>
#include <vector>

#include "amd/entry_points.hpp"
#include "dcgm/entry_points.hpp"
#include "nvml/abi.hpp"
#include "sim/entries.hpp"
#include "sim/json_reader.hpp"

namespace gpuscope::sim {
namespace {

constexpr std::int64_t kUs = 1000;
constexpr std::int64_t kMs = 1000 * kUs;

// What the calls cost on an NVIDIA H200, driver 580.159.04 (docs/validation.md, docs/
// performance.md): bench_nvml_calls and the health and MIG scripts, each call timed over 1000
// calls. Calls not listed were not timed, or cost under 300 ns there (power usage 272 ns,
// utilization 246 ns), which the simulator's own ~135 ns already stands for.
DriverCosts h200_table() {
  DriverCosts costs;
  costs.name = "h200";
  costs.call_ns = {
      {"nvmlDeviceGetTotalEnergyConsumption", 3840 * kUs},
      // One GPM sample and its metrics took 34 µs together; how the two calls share it was not
      // timed: the sample (a read of the GPU's counters) is given most of it.
      {"nvmlGpmSampleGet", 30 * kUs},
      {"nvmlGpmMigSampleGet", 30 * kUs},
      {"nvmlGpmMetricsGet", 4 * kUs},
      {"nvmlDeviceGetEccMode", 159 * kUs},
      {"nvmlDeviceGetPcieReplayCounter", 182 * kUs},
      {"nvmlDeviceGetMigMode", 162 * kUs},
      {"nvmlDeviceGetMaxMigDeviceCount", 150 * kUs},
      {"nvmlDeviceGetTotalEccErrors", 1500},
      {"nvmlDeviceGetRemappedRows", 1500},
      {"nvmlDeviceGetEncoderUtilization", 1400},
      {"nvmlDeviceGetDecoderUtilization", 1100},
      {"nvmlDeviceGetSupportedEventTypes", 1000},
      {"nvmlEventSetWait", 4 * kUs},
  };
  costs.field_ns = {
      {nvml::kFieldTotalEnergyConsumption, 3840 * kUs},  // 83: timed, as the energy call
      {nvml::kFieldEnergy, 3840 * kUs},                  // 191: the driver's latency said 3.1 ms
      // Timed alone (scripts/nvml-call-costs.py, 2026-11-29): 185 and 186 3.5 µs each, 4.5 µs
      // together; the driver's reported latency for 185 (763 µs) was not what a call costs.
      {nvml::kFieldPowerAverage, 4 * kUs},  // 185
      {nvml::kFieldPowerInstant, 4 * kUs},  // 186
      // Not timed alone: the latency the driver reported for each (latencyUsec). The main read's
      // five fields (186, 185, 82 and these two) took 270 µs idle, 443 µs under load.
      {nvml::kFieldPcieCountTxBytes, 167 * kUs},
      {nvml::kFieldPcieCountRxBytes, 399 * kUs},
  };
  // The violation-time fields 74-81 and 269-271: one request of all eleven took 1.42 ms.
  for (unsigned id = 74; id <= 81; ++id) costs.field_ns[id] = 1420 * kUs;
  for (unsigned id = 269; id <= 271; ++id) costs.field_ns[id] = 1420 * kUs;
  // Each NVML entry under its newest symbol, as parse_call_costs keeps them.
  std::map<std::string, std::int64_t, std::less<>> keyed;
  for (const auto& [name, ns] : costs.call_ns) {
    const auto entry = find_entry(name);
    keyed[entry ? std::string(entry_symbols(*entry).front()) : name] = ns;
  }
  costs.call_ns = std::move(keyed);
  return costs;
}

#define GPUSCOPE_SIM_COST_NAME(id, req, params, args, symbol) #symbol,
const std::vector<std::string>& other_library_symbols() {
  static const std::vector<std::string> names = {
      GPUSCOPE_DCGM_ENTRY_POINTS(GPUSCOPE_SIM_COST_NAME)
          GPUSCOPE_AMDSMI_ENTRY_POINTS(GPUSCOPE_SIM_COST_NAME)
              GPUSCOPE_RSMI_ENTRY_POINTS(GPUSCOPE_SIM_COST_NAME)};
  return names;
}
#undef GPUSCOPE_SIM_COST_NAME

// Every symbol a cost may name: NVML's (each entry's every name) and the other libraries'.
std::vector<std::string> known_symbols() {
  std::vector<std::string> names = other_library_symbols();
  for (std::size_t i = 0; i < kEntryCount; ++i) {
    for (std::string_view symbol : entry_symbols(static_cast<Entry>(i))) {
      names.emplace_back(symbol);
    }
  }
  return names;
}

// The NVML entry's newest symbol for any of its names; the name itself for other libraries.
std::string canonical_symbol(const std::string& name, const std::string& pointer) {
  if (const auto entry = find_entry(name)) return std::string(entry_symbols(*entry).front());
  const auto& others = other_library_symbols();
  if (std::find(others.begin(), others.end(), name) != others.end()) return name;
  std::string what = "unknown function \"" + name + "\" (NVML, DCGM, AMD SMI or ROCm SMI)";
  if (const auto suggestion = closest_match(name, known_symbols())) {
    what += " (did you mean \"" + *suggestion + "\"?)";
  }
  fail_at(pointer, what);
}

std::int64_t cost_ns(const nlohmann::json& value, const std::string& pointer) {
  const double ms = checked_number(value, pointer, {0, 10000});
  return static_cast<std::int64_t>(ms * 1e6 + 0.5);
}

DriverCosts base_table(const std::string& name, const std::string& pointer) {
  if (auto costs = driver_costs_named(name)) return *std::move(costs);
  fail_at(pointer, "unknown cost table \"" + name + "\" (\"none\" or \"h200\")");
}

CostWaits parse_waits(const std::string& text, const std::string& pointer) {
  if (text == "gpu") return CostWaits::Gpu;
  if (text == "node") return CostWaits::Node;
  if (text == "none") return CostWaits::None;
  fail_at(pointer, "\"" + text + "\" is not \"gpu\", \"node\" or \"none\"");
}

void parse_call_costs(const nlohmann::json& calls, const std::string& pointer, DriverCosts& costs) {
  if (!calls.is_object()) fail_at(pointer, "expected an object of function name -> milliseconds");
  for (const auto& [name, ms] : calls.items()) {
    const std::string child = pointer + "/" + name;
    costs.call_ns[canonical_symbol(name, child)] = cost_ns(ms, child);
  }
}

void parse_field_costs(const nlohmann::json& fields, const std::string& pointer,
                       DriverCosts& costs) {
  if (!fields.is_object()) fail_at(pointer, "expected an object of field id -> milliseconds");
  for (const auto& [id, ms] : fields.items()) {
    const std::string child = pointer + "/" + id;
    char* end = nullptr;
    const unsigned long number = std::strtoul(id.c_str(), &end, 10);
    if (id.empty() || *end != '\0' || number > 10000) {
      fail_at(child, "\"" + id + "\" is not a field id (0..10000)");
    }
    costs.field_ns[static_cast<unsigned>(number)] = cost_ns(ms, child);
  }
}

std::mutex& node_turn() {
  static std::mutex turn;
  return turn;
}

std::mutex& gpu_turn(unsigned gpu) {
  static std::array<std::mutex, 64> turns;
  return turns[gpu % turns.size()];
}

void wait_ns(std::int64_t ns) {
  constexpr std::int64_t kSpinBelow = 20 * kUs;
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
  if (ns >= kSpinBelow) {
    std::this_thread::sleep_until(until);
    return;
  }
  while (std::chrono::steady_clock::now() < until) {
  }
}

}  // namespace

std::int64_t DriverCosts::of_call(std::string_view symbol) const {
  if (call_ns.empty()) return 0;
  if (const auto it = call_ns.find(symbol); it != call_ns.end()) return it->second;
  // An NVML entry is listed under its newest symbol; an older name is charged the same. (Only
  // NVML's names have versions: the other libraries' calls never search the entry list.)
  if (!symbol.starts_with("nvml")) return 0;
  if (const auto entry = find_entry(symbol)) {
    const std::string_view newest = entry_symbols(*entry).front();
    if (newest != symbol) return of_call(newest);
  }
  return 0;
}

std::optional<DriverCosts> driver_costs_named(std::string_view name) {
  const std::size_t colon = name.find(':');
  const std::string_view table = name.substr(0, colon);
  std::optional<DriverCosts> costs;
  if (table == "none") costs = DriverCosts{};
  if (table == "h200") costs = h200_table();
  if (!costs || colon == std::string_view::npos) return costs;
  const std::string_view waits = name.substr(colon + 1);
  if (waits == "gpu") {
    costs->waits = CostWaits::Gpu;
  } else if (waits == "node") {
    costs->waits = CostWaits::Node;
  } else if (waits == "none") {
    costs->waits = CostWaits::None;
  } else {
    return std::nullopt;
  }
  return costs;
}

DriverCosts parse_driver_costs(const nlohmann::json& value, const std::string& pointer) {
  if (value.is_string()) return base_table(value.get<std::string>(), pointer);
  ObjectReader reader(value, pointer);
  DriverCosts costs = base_table(reader.string("base", "none"), reader.child("base"));
  if (const nlohmann::json* calls = reader.find("calls_ms")) {
    parse_call_costs(*calls, reader.child("calls_ms"), costs);
  }
  if (const nlohmann::json* fields = reader.find("fields_ms")) {
    parse_field_costs(*fields, reader.child("fields_ms"), costs);
  }
  if (const auto waits = reader.optional_string("waits")) {
    costs.waits = parse_waits(*waits, reader.child("waits"));
  }
  reader.finish();
  return costs;
}

std::atomic<std::int64_t>& spent_total() {
  static std::atomic<std::int64_t> total{0};
  return total;
}

std::int64_t spent_ns() {
  return spent_total().load(std::memory_order_relaxed);
}

void spend_call_cost(CostWaits waits, std::int64_t ns, std::optional<unsigned> gpu) {
  if (ns <= 0) return;
  spent_total().fetch_add(ns, std::memory_order_relaxed);
  if (waits == CostWaits::Node) {
    std::lock_guard turn(node_turn());
    wait_ns(ns);
  } else if (waits == CostWaits::Gpu && gpu) {
    std::lock_guard turn(gpu_turn(*gpu));
    wait_ns(ns);
  } else {
    wait_ns(ns);
  }
}

}  // namespace gpuscope::sim
