#include <filesystem>
#include <set>

#include "sim/json_reader.hpp"
#include "sim/parse_parts.hpp"
#include "sim/scenario_parser.hpp"
#include "sim/small_file.hpp"

namespace gpuscope::sim {
namespace {

constexpr std::size_t kMaxGpus = 64;

// Phases of the whole scenario after repeat expansion: every phase set, the top-level list and
// each GPU's own copy counted. A bound on memory that no scenario written by hand comes near.
constexpr std::size_t kMaxTotalPhases = 100'000;

class PhaseBudget {
 public:
  void charge(std::size_t count, const std::string& pointer) {
    used_ += count;
    if (used_ > kMaxTotalPhases) {
      fail_at(pointer, "the scenario expands past " + std::to_string(kMaxTotalPhases) +
                           " phases in all (every GPU's phases and the phase sets counted); "
                           "use fewer repeats or fewer GPUs");
    }
  }

 private:
  std::size_t used_ = 0;
};

bool is_file_name_safe(const std::string& name) {
  if (name.empty() || name.size() > 100) return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::map<std::string, std::vector<Phase>> parse_phase_sets(ObjectReader& root,
                                                           PhaseBudget& budget) {
  std::map<std::string, std::vector<Phase>> sets;
  const nlohmann::json* value = root.find("phase_sets");
  if (value == nullptr) return sets;
  if (!value->is_object()) fail_at(root.child("phase_sets"), "expected an object of phase lists");
  for (const auto& [name, list] : value->items()) {
    const std::string pointer = root.child("phase_sets") + "/" + name;
    sets[name] = parse_phase_list(list, pointer);
    budget.charge(sets[name].size(), pointer);
  }
  return sets;
}

// One GPU of the "gpus" value: its JSON (a list element, or the count form's template with its
// overrides), and the JSON pointer to blame for its errors.
struct GpuSource {
  const nlohmann::json* value = nullptr;         // the list element, or the template
  std::vector<const nlohmann::json*> overrides;  // merge patches on top of the template
  std::string pointer;

  // The GPU's JSON, built when it is parsed: copies of a template for 64 GPUs at once would hold
  // 64 times the file in memory.
  nlohmann::json materialise() const {
    if (overrides.empty()) return *value;
    nlohmann::json gpu = *value;
    for (const nlohmann::json* patch : overrides) gpu.merge_patch(*patch);
    return gpu;
  }
};

// Expands {"count": N, "template": {...}, "overrides": {"<index>": {...}}} into GPU sources,
// each the template with its override merged in (RFC 7386 merge patch: objects merge, arrays
// and scalars replace).
std::vector<GpuSource> expand_gpus(const nlohmann::json& value, const std::string& pointer) {
  std::vector<GpuSource> gpus;
  if (value.is_array()) {
    if (value.size() > kMaxGpus) {
      fail_at(pointer, "a scenario needs 1 to " + std::to_string(kMaxGpus) + " GPUs");
    }
    for (std::size_t i = 0; i < value.size(); ++i) {
      gpus.push_back({&value[i], {}, pointer + "/" + std::to_string(i)});
    }
    return gpus;
  }
  ObjectReader reader(value, pointer);
  const auto count = reader.unsigned_integer("count", 0, kMaxGpus);
  if (count == 0) fail_at(pointer, "\"count\" must be 1 to " + std::to_string(kMaxGpus));
  const nlohmann::json* templ = reader.find("template");
  if (templ == nullptr) fail_at(pointer, "missing required key \"template\"");
  for (std::size_t i = 0; i < count; ++i) gpus.push_back({templ, {}, reader.child("template")});
  if (const nlohmann::json* overrides = reader.find("overrides")) {
    if (!overrides->is_object()) fail_at(reader.child("overrides"), "expected an object");
    for (const auto& [key, patch] : overrides->items()) {
      const std::string child = reader.child("overrides") + "/" + key;
      std::size_t index = 0;
      std::size_t used = 0;
      try {
        index = std::stoul(key, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != key.size() || index >= count) {
        fail_at(child, "override keys are GPU indices 0.." + std::to_string(count - 1));
      }
      gpus[index].overrides.push_back(&patch);
      gpus[index].pointer = child;
    }
  }
  reader.finish();
  return gpus;
}

void check_unique(const std::vector<GpuConfig>& gpus, const std::vector<GpuSource>& sources) {
  std::set<std::string> uuids;  // GPU- and MIG- UUIDs: one name space, as NVML looks both up
  std::set<std::string> buses;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    if (!uuids.insert(gpus[i].uuid).second) {
      fail_at(sources[i].pointer + "/uuid", "duplicate UUID " + gpus[i].uuid);
    }
    for (std::size_t m = 0; m < gpus[i].mig_devices.size(); ++m) {
      if (!uuids.insert(gpus[i].mig_devices[m]).second) {
        fail_at(sources[i].pointer + "/mig_devices/" + std::to_string(m),
                "duplicate MIG device UUID " + gpus[i].mig_devices[m]);
      }
    }
    const std::size_t instances = gpus[i].mig ? gpus[i].mig->instances.size() : 0;
    for (std::size_t m = 0; m < instances; ++m) {
      const std::string& uuid = gpus[i].mig->instances[m].uuid;
      if (!uuids.insert(uuid).second) {
        fail_at(sources[i].pointer + "/mig/instances/" + std::to_string(m) + "/uuid",
                "duplicate MIG device UUID " + uuid);
      }
    }
    if (!buses.insert(gpus[i].pci_bus_id).second) {
      fail_at(sources[i].pointer + "/pci_bus_id", "duplicate PCI bus id " + gpus[i].pci_bus_id);
    }
  }
}

Scenario parse_root(const nlohmann::json& json, const std::string& path) {
  ObjectReader root(json, "");
  Scenario scenario;
  scenario.path = path;
  scenario.name = root.string("name", std::filesystem::path(path).stem().string());
  if (!is_file_name_safe(scenario.name)) {
    fail_at("/name", "\"" + scenario.name + "\" must be 1 to 100 of A-Z a-z 0-9 . _ -");
  }
  scenario.description = root.string("description", "");
  scenario.seed = root.unsigned_integer("seed", 0, UINT64_MAX);
  scenario.time_scale = root.number("time_scale", 1.0, {0, 10000, true});
  scenario.driver_version = root.string("driver_version", scenario.driver_version);
  scenario.nvml_version = root.string("nvml_version", "12." + scenario.driver_version);
  scenario.cuda_driver_version =
      static_cast<int>(root.unsigned_integer("cuda_driver_version", 12040, 99999));
  scenario.privileged = root.boolean("privileged", true);
  if (const auto state = root.optional_string("state_file")) {
    scenario.state_file = (std::filesystem::path(path).parent_path() / *state).string();
  }
  if (const nlohmann::json* faults = root.find("faults")) {
    scenario.global_faults = parse_faults(*faults, "/faults", FaultSpec{}, &scenario.init_error);
  }
  if (const nlohmann::json* dcgm = root.find("dcgm")) scenario.dcgm = parse_dcgm(*dcgm, "/dcgm");
  if (const nlohmann::json* costs = root.find("driver_costs")) {
    scenario.driver_costs = parse_driver_costs(*costs, "/driver_costs");
  }
  PhaseBudget budget;
  std::optional<std::vector<Phase>> default_phases;
  if (const nlohmann::json* phases = root.find("phases")) {
    default_phases = parse_phase_list(*phases, "/phases");
    budget.charge(default_phases->size(), "/phases");
  }
  const auto phase_sets = parse_phase_sets(root, budget);
  const nlohmann::json* gpus = root.find("gpus");
  const nlohmann::json* amd_gpus = root.find("amd_gpus");
  if (gpus == nullptr && amd_gpus == nullptr) {
    fail_at("", "missing required key \"gpus\" (NVIDIA GPUs) or \"amd_gpus\" (AMD GPUs)");
  }
  if (const nlohmann::json* amd = root.find("amd")) {
    scenario.amd = parse_amd_libraries(*amd, "/amd");
  }
  root.finish();  // a misspelt top-level key explains more than the errors it would cause
  const GpuContext context{scenario.seed, default_phases ? &*default_phases : nullptr, &phase_sets,
                           &scenario.global_faults};
  if (amd_gpus != nullptr) {
    scenario.amd_gpus = parse_amd_gpus(*amd_gpus, "/amd_gpus", context);
    for (const AmdGpuConfig& device : scenario.amd_gpus) {
      budget.charge(device.gpu.phases.size(), "/amd_gpus");
    }
  }
  if (gpus == nullptr) return scenario;
  const auto sources = expand_gpus(*gpus, "/gpus");
  if (sources.empty() || sources.size() > kMaxGpus) {
    fail_at("/gpus", "a scenario needs 1 to " + std::to_string(kMaxGpus) + " GPUs");
  }
  for (std::size_t i = 0; i < sources.size(); ++i) {
    scenario.gpus.push_back(parse_gpu(sources[i].materialise(), sources[i].pointer, i, context));
    budget.charge(scenario.gpus.back().phases.size(), sources[i].pointer);
  }
  check_unique(scenario.gpus, sources);
  return scenario;
}

}  // namespace

tl::expected<Scenario, std::string> parse_scenario(std::string_view text, const std::string& path) {
  const std::string prefix = "scenario " + path + ": ";
  if (text.size() > kMaxScenarioBytes) {
    return tl::make_unexpected(prefix + "is larger than " + size_text(kMaxScenarioBytes));
  }
  // Before parsing: the parse and every walk over its result recurse once per level.
  if (const auto deep = nesting_past(text, kMaxScenarioDepth)) {
    return tl::make_unexpected(prefix + "JSON nested deeper than " +
                               std::to_string(kMaxScenarioDepth) + " levels (at byte " +
                               std::to_string(*deep) + "); flatten the repeat blocks");
  }
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& error) {
    return tl::make_unexpected(prefix + "invalid JSON: " + error.what());
  }
  try {
    return parse_root(json, path);
  } catch (const ScenarioError& error) {
    return tl::make_unexpected(prefix + error.what());
  }
}

tl::expected<Scenario, std::string> load_scenario(const std::string& path) {
  const auto text = read_small_file(path, kMaxScenarioBytes);
  if (!text) {
    return tl::make_unexpected("scenario " + path + ": " +
                               (text.error().error != 0 ? "cannot open the file (" : "") +
                               failure_text(text.error()) + (text.error().error != 0 ? ")" : ""));
  }
  return parse_scenario(*text, path);
}

}  // namespace gpuscope::sim
