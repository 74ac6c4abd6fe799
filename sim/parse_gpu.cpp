#include <algorithm>
#include <array>
#include <cstdio>
#include <set>
#include <string>

#include "sim/json_reader.hpp"
#include "sim/mig.hpp"
#include "sim/noise.hpp"
#include "sim/parse_parts.hpp"

namespace gpuscope::sim {
namespace {

std::string known_models() {
  std::string text;
  for (const std::string& key : builtin_model_keys()) text += (text.empty() ? "" : ", ") + key;
  return text;
}

void parse_power(ObjectReader& gpu, PowerSpec& power) {
  const nlohmann::json* value = gpu.find("power");
  if (value == nullptr) return;
  ObjectReader reader(*value, gpu.child("power"));
  power.min_w = reader.number("min_w", power.min_w, kPositive);
  power.max_w = reader.number("max_w", power.max_w, kPositive);
  power.default_w = reader.number("default_w", power.default_w, kPositive);
  power.idle_w = reader.number("idle_w", power.idle_w, kPositive);
  reader.finish();
  const auto require = [&](bool ok, const char* key, double left, const char* relation,
                           const char* other, double right) {
    if (ok) return;
    fail_at(reader.child(key), format_number(left) + " W must be " + relation + " " + other + " (" +
                                   format_number(right) + " W)");
  };
  require(power.min_w <= power.max_w, "min_w", power.min_w, "<=", "max_w", power.max_w);
  require(power.default_w >= power.min_w, "default_w", power.default_w, ">=", "min_w", power.min_w);
  require(power.default_w <= power.max_w, "default_w", power.default_w, "<=", "max_w", power.max_w);
  // A cap at or below idle power would leave no headroom for work; no real board allows it.
  require(power.min_w > power.idle_w, "min_w", power.min_w, ">", "idle_w", power.idle_w);
}

void parse_clocks(ObjectReader& gpu, ClockSpec& clocks) {
  const nlohmann::json* value = gpu.find("clocks");
  if (value == nullptr) return;
  ObjectReader reader(*value, gpu.child("clocks"));
  const auto mhz = [&](const char* key, unsigned fallback) {
    return static_cast<unsigned>(reader.number(key, fallback, {1, 10000}));
  };
  clocks.max_sm_mhz = mhz("max_sm_mhz", clocks.max_sm_mhz);
  clocks.idle_sm_mhz = mhz("idle_sm_mhz", clocks.idle_sm_mhz);
  clocks.mem_mhz = mhz("mem_mhz", clocks.mem_mhz);
  clocks.video_mhz = mhz("video_mhz", clocks.video_mhz);
  reader.finish();
  if (clocks.idle_sm_mhz > clocks.max_sm_mhz) {
    fail_at(reader.child("idle_sm_mhz"),
            "must be <= max_sm_mhz (" + std::to_string(clocks.max_sm_mhz) + ")");
  }
}

void parse_thermal(ObjectReader& gpu, ThermalSpec& thermal) {
  const nlohmann::json* value = gpu.find("thermal");
  if (value == nullptr) return;
  ObjectReader reader(*value, gpu.child("thermal"));
  thermal.idle_c = reader.number("idle_c", thermal.idle_c, {-40, 120});
  thermal.c_per_w = reader.number("c_per_w", thermal.c_per_w, {0, 1});
  thermal.tau_s = reader.number("tau_s", thermal.tau_s, {0, 3600, true});
  thermal.slowdown_c = reader.number("slowdown_c", thermal.slowdown_c, {0, 150});
  thermal.hw_slowdown_c = reader.number("hw_slowdown_c", thermal.hw_slowdown_c, {0, 150});
  thermal.memory_offset_c = reader.number("memory_offset_c", thermal.memory_offset_c, {-30, 30});
  reader.finish();
  if (thermal.slowdown_c > thermal.hw_slowdown_c) {
    fail_at(reader.child("slowdown_c"),
            "must be <= hw_slowdown_c (" + format_number(thermal.hw_slowdown_c) + ")");
  }
}

}  // namespace

std::vector<Phase> parse_gpu_phases(ObjectReader& gpu, const GpuContext& context) {
  const nlohmann::json* value = gpu.find("phases");
  if (value == nullptr) {
    if (context.default_phases == nullptr) {
      fail_at(gpu.pointer(), "no phases: give \"phases\" here or at the top level");
    }
    return *context.default_phases;
  }
  if (!value->is_string()) return parse_phase_list(*value, gpu.child("phases"));
  const std::string& set_name = value->get_ref<const std::string&>();
  const auto found = context.phase_sets->find(set_name);
  if (found == context.phase_sets->end()) {
    std::string known;
    for (const auto& [name, unused] : *context.phase_sets) known += " " + name;
    fail_at(gpu.child("phases"), "no phase set named \"" + set_name + "\" in phase_sets (known:" +
                                     (known.empty() ? std::string(" none") : known) + ")");
  }
  return found->second;
}

void parse_processes(ObjectReader& gpu, std::vector<ProcessSpec>& processes) {
  const nlohmann::json* value = gpu.find("processes");
  if (value == nullptr) return;
  if (!value->is_array()) fail_at(gpu.child("processes"), "expected an array of processes");
  std::set<unsigned> pids;
  for (std::size_t i = 0; i < value->size(); ++i) {
    ObjectReader reader((*value)[i], gpu.child("processes") + "/" + std::to_string(i));
    ProcessSpec process;
    process.pid = static_cast<unsigned>(reader.unsigned_integer("pid", 0, 4194304));
    if (process.pid == 0) fail_at(reader.pointer(), "missing or zero \"pid\"");
    process.used_memory_mib =
        static_cast<unsigned>(reader.unsigned_integer("used_memory_mib", 0, 1U << 24U));
    reader.finish();
    if (!pids.insert(process.pid).second) fail_at(reader.child("pid"), "duplicate pid");
    processes.push_back(process);
  }
}

namespace {

// "ecc_aggregate_start": {"corrected": N, "uncorrected": M}, the lifetime ECC counts before the
// scenario began.
void parse_ecc_start(ObjectReader& gpu, EccStart& start) {
  const nlohmann::json* value = gpu.find("ecc_aggregate_start");
  if (value == nullptr) return;
  ObjectReader reader(*value, gpu.child("ecc_aggregate_start"));
  constexpr std::uint64_t kMax = 1'000'000'000'000ULL;
  start.corrected = reader.unsigned_integer("corrected", 0, kMax);
  start.uncorrected = reader.unsigned_integer("uncorrected", 0, kMax);
  reader.finish();
}

void parse_mig_devices(ObjectReader& gpu, std::vector<std::string>& mig_devices) {
  const nlohmann::json* value = gpu.find("mig_devices");
  if (value == nullptr) return;
  const std::string pointer = gpu.child("mig_devices");
  if (!value->is_array()) fail_at(pointer, "expected an array of MIG device UUIDs (\"MIG-...\")");
  if (value->size() > kMaxMigDevices) {
    fail_at(pointer, std::to_string(value->size()) + " MIG devices: a GPU has at most " +
                         std::to_string(kMaxMigDevices));
  }
  for (std::size_t i = 0; i < value->size(); ++i) {
    const nlohmann::json& entry = (*value)[i];
    const std::string where = pointer + "/" + std::to_string(i);
    if (!entry.is_string()) fail_at(where, "expected a string like \"MIG-xxxxxxxx-...\"");
    const std::string& uuid = entry.get_ref<const std::string&>();
    if (!uuid.starts_with("MIG-") || uuid.size() <= 4 || uuid.size() >= 80) {
      fail_at(where, "\"" + uuid + "\" is not a MIG device UUID like \"MIG-xxxxxxxx-...\"");
    }
    mig_devices.push_back(uuid);
  }
}

void parse_pci(const std::string& text, const std::string& pointer, GpuConfig& gpu) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  char extra = 0;
  if (std::sscanf(text.c_str(), "%x:%x:%x.%x%c", &domain, &bus, &device, &function, &extra) != 4 ||
      bus > 0xFF || device > 0x1F || function > 7) {
    fail_at(pointer, "\"" + text + "\" is not a PCI bus id like \"00000000:18:00.0\"");
  }
  char normalised[32];
  std::snprintf(normalised, sizeof normalised, "%08X:%02X:%02X.%X", domain, bus, device, function);
  gpu.pci_bus_id = normalised;
  gpu.pci_domain = domain;
  gpu.pci_bus = bus;
  gpu.pci_device = device;
}

void check_phases_fit(const GpuConfig& gpu, const std::string& pointer) {
  for (std::size_t i = 0; i < gpu.phases.size(); ++i) {
    const Phase& phase = gpu.phases[i];
    const std::string where = pointer + " phase " + std::to_string(i) + " (" + phase.name + ")";
    const double used_mib = phase.memory_used_gib * 1024.0 + gpu.spec.reserved_mib;
    if (used_mib > gpu.spec.memory_mib) {
      fail_at(where, "memory_used_gib " + format_number(phase.memory_used_gib) +
                         " does not fit in " + std::to_string(gpu.spec.memory_mib) + " MiB");
    }
    if (phase.power_w &&
        (*phase.power_w > gpu.spec.power.max_w || *phase.power_w < gpu.spec.power.idle_w)) {
      fail_at(where, "power_w " + format_number(*phase.power_w) + " must lie between idle_w (" +
                         format_number(gpu.spec.power.idle_w) + ") and max_w (" +
                         format_number(gpu.spec.power.max_w) + ")");
    }
  }
}

}  // namespace

std::string default_uuid(std::uint64_t seed, std::size_t index) {
  const std::uint64_t high = hash_keys(seed, 0x7575696400ULL, index, 1);
  const std::uint64_t low = hash_keys(seed, 0x7575696400ULL, index, 2);
  char text[48];
  std::snprintf(text, sizeof text, "GPU-%08x-%04x-%04x-%04x-%012llx",
                static_cast<unsigned>(high >> 32U), static_cast<unsigned>((high >> 16U) & 0xFFFFU),
                static_cast<unsigned>(high & 0xFFFFU), static_cast<unsigned>(low >> 48U),
                static_cast<unsigned long long>(low & 0xFFFFFFFFFFFFULL));
  return text;
}

std::string default_pci_bus_id(std::size_t index) {
  // The bus numbers of the eight GPUs of an HGX H100 board; further GPUs take the next bus.
  constexpr std::array<unsigned, 8> kBuses = {0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB};
  const unsigned bus = kBuses[index % kBuses.size()] + static_cast<unsigned>(index / kBuses.size());
  char text[32];
  std::snprintf(text, sizeof text, "00000000:%02X:00.0", bus);
  return text;
}

GpuConfig parse_gpu(const nlohmann::json& value, const std::string& pointer, std::size_t index,
                    const GpuContext& context) {
  ObjectReader reader(value, pointer);
  GpuConfig gpu;
  const std::optional<std::string> model = reader.optional_string("model");
  if (!model) fail_at(pointer, "missing required key \"model\" (one of " + known_models() + ")");
  const GpuSpec* spec = find_builtin_model(*model);
  if (spec == nullptr) {
    std::string what = "unknown model \"" + *model + "\"";
    if (const auto suggestion = closest_match(*model, builtin_model_keys())) {
      what += " (did you mean \"" + *suggestion + "\"?)";
    }
    fail_at(reader.child("model"), what + "; built-in models: " + known_models());
  }
  gpu.spec = *spec;
  gpu.spec.name = reader.string("name", gpu.spec.name);
  if (gpu.spec.name.empty() || gpu.spec.name.size() >= 96) {
    fail_at(reader.child("name"), "must be 1 to 95 characters");
  }
  gpu.uuid = reader.string("uuid", default_uuid(context.seed, index));
  if (!gpu.uuid.starts_with("GPU-") || gpu.uuid.size() >= 80) {
    fail_at(reader.child("uuid"), "\"" + gpu.uuid + "\" is not a UUID like \"GPU-xxxxxxxx-...\"");
  }
  parse_pci(reader.string("pci_bus_id", default_pci_bus_id(index)), reader.child("pci_bus_id"),
            gpu);
  gpu.spec.memory_mib =
      static_cast<unsigned>(reader.unsigned_integer("memory_mib", gpu.spec.memory_mib, 1U << 22U));
  gpu.spec.reserved_mib = static_cast<unsigned>(
      reader.unsigned_integer("reserved_mib", gpu.spec.reserved_mib, gpu.spec.memory_mib));
  parse_power(reader, gpu.spec.power);
  parse_clocks(reader, gpu.spec.clocks);
  parse_thermal(reader, gpu.spec.thermal);
  gpu.spec.gpm = reader.boolean("gpm", gpu.spec.gpm);
  gpu.spec.ecc = reader.boolean("ecc", gpu.spec.ecc);
  gpu.spec.nvlink = reader.boolean("nvlink", gpu.spec.nvlink);
  parse_ecc_start(reader, gpu.ecc_aggregate_start);
  gpu.activity_scale = reader.number("activity_scale", 1.0, {0, 2});
  gpu.phases = parse_gpu_phases(reader, context);
  gpu.faults = *context.global_faults;
  if (const nlohmann::json* faults = reader.find("faults")) {
    gpu.faults = parse_faults(*faults, reader.child("faults"), *context.global_faults, nullptr);
  }
  parse_processes(reader, gpu.processes);
  parse_mig_devices(reader, gpu.mig_devices);
  parse_mig(reader, gpu, index, context);
  reader.finish();
  check_phases_fit(gpu, pointer);
  return gpu;
}

}  // namespace gpuscope::sim
