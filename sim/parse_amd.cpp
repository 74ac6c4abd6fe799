// The scenario's AMD part: "amd_gpus" (cards of a built-in AMD model, each GCD a device) and the
// "amd" object (how the simulated AMD SMI and ROCm SMI libraries behave). docs/scenarios.md.
#include <array>
#include <cstdio>

#include "sim/noise.hpp"
#include "sim/parse_parts.hpp"

namespace gpuscope::sim {
namespace {

constexpr std::size_t kMaxAmdDevices = 64;

std::string known_amd_models() {
  std::string text;
  for (const std::string& key : amd_model_keys()) text += (text.empty() ? "" : ", ") + key;
  return text;
}

// The default PCI address of AMD device `index`: the buses of a four-card MI250X node's GCDs.
std::string default_amd_pci_bus_id(std::size_t index) {
  constexpr std::array<unsigned, 8> kBuses = {0xC1, 0xC6, 0xC9, 0xCE, 0xD1, 0xD6, 0xD9, 0xDE};
  const unsigned bus = kBuses[index % kBuses.size()] + static_cast<unsigned>(index / kBuses.size());
  char text[32];
  std::snprintf(text, sizeof text, "00000000:%02X:00.0", bus);
  return text;
}

std::string amd_uuid(std::uint64_t unique_id, unsigned device_id) {
  char text[48];
  std::snprintf(text, sizeof text, "%04x%04x-0000-1000-80%02x-%012llx", 0xFFU, device_id,
                static_cast<unsigned>(unique_id >> 56U),
                static_cast<unsigned long long>(unique_id & 0xFFFFFFFFFFFFULL));
  return text;
}

// One GCD's keys: its phases, processes and activity scale (a card's, or its "gcds" entry's).
void parse_gcd(ObjectReader& reader, AmdGpuConfig& device, const GpuContext& context) {
  device.gpu.activity_scale = reader.number("activity_scale", device.gpu.activity_scale, {0, 2});
  if (reader.has("phases") || device.gpu.phases.empty()) {
    device.gpu.phases = parse_gpu_phases(reader, context);
  }
  if (reader.has("processes")) {
    device.gpu.processes.clear();
    parse_processes(reader, device.gpu.processes);
  }
}

void parse_card(const nlohmann::json& value, const std::string& pointer, unsigned card,
                const GpuContext& context, std::vector<AmdGpuConfig>& devices) {
  ObjectReader reader(value, pointer);
  AmdGpuConfig base;
  const std::string model = reader.string("model", "");
  if (!find_amd_model(model, base.gpu.spec, base.amd)) {
    fail_at(reader.child("model"),
            "unknown AMD model \"" + model + "\"; built-in AMD models: " + known_amd_models());
  }
  base.card = card;
  const auto bits =
      reader.unsigned_integer("energy_counter_bits", base.amd.energy_counter_bits, 64);
  if (bits != 32 && bits != 64) fail_at(reader.child("energy_counter_bits"), "must be 32 or 64");
  base.amd.energy_counter_bits = static_cast<unsigned>(bits);
  base.reset_at_s = reader.optional_number("reset_at_s", {0, 1e7});
  base.energy_counter_start_j = reader.optional_number("energy_counter_start_j", {0, 1e12});
  parse_gcd(reader, base, context);
  const nlohmann::json* gcds = reader.find("gcds");
  if (gcds != nullptr && (!gcds->is_array() || gcds->size() != base.amd.gcds_per_card)) {
    fail_at(reader.child("gcds"), "an " + model + " card has " +
                                      std::to_string(base.amd.gcds_per_card) +
                                      " GCDs: give a list of that many objects");
  }
  reader.finish();
  for (unsigned gcd = 0; gcd < base.amd.gcds_per_card; ++gcd) {
    AmdGpuConfig device = base;
    device.gcd = gcd;
    if (gcds != nullptr) {
      ObjectReader gcd_reader((*gcds)[gcd], reader.child("gcds") + "/" + std::to_string(gcd));
      parse_gcd(gcd_reader, device, context);
      gcd_reader.finish();
    }
    const std::size_t index = devices.size();
    device.unique_id = hash_keys(context.seed, 0x616d6400ULL, index, 1);
    device.gpu.uuid = amd_uuid(device.unique_id, device.amd.device_id);
    device.gpu.pci_bus_id = default_amd_pci_bus_id(index);
    devices.push_back(std::move(device));
  }
}

AmdInitError init_error_of(const std::string& word, const std::string& pointer) {
  if (word == "permission") return AmdInitError::Permission;
  if (word == "driver_not_loaded") return AmdInitError::DriverNotLoaded;
  if (word == "init_error") return AmdInitError::InitError;
  fail_at(pointer, "\"" + word + "\" is not one of permission, driver_not_loaded, init_error");
}

}  // namespace

std::vector<AmdGpuConfig> parse_amd_gpus(const nlohmann::json& value, const std::string& pointer,
                                         const GpuContext& context) {
  if (!value.is_array() || value.empty()) fail_at(pointer, "expected a non-empty list of cards");
  std::vector<AmdGpuConfig> devices;
  for (std::size_t i = 0; i < value.size(); ++i) {
    parse_card(value[i], pointer + "/" + std::to_string(i), static_cast<unsigned>(i), context,
               devices);
    if (devices.size() > kMaxAmdDevices) {
      fail_at(pointer, "at most " + std::to_string(kMaxAmdDevices) + " AMD devices (GCDs)");
    }
  }
  return devices;
}

AmdLibrariesSpec parse_amd_libraries(const nlohmann::json& value, const std::string& pointer) {
  ObjectReader reader(value, pointer);
  AmdLibrariesSpec spec;
  spec.amd_smi = reader.boolean("amd_smi", true);
  spec.rocm_smi = reader.boolean("rocm_smi", true);
  if (const auto word = reader.optional_string("init_error")) {
    spec.init_error = init_error_of(*word, reader.child("init_error"));
  }
  reader.finish();
  return spec;
}

}  // namespace gpuscope::sim
