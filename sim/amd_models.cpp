// Built-in AMD Instinct models. Memory, peak power, peak engine and memory clocks and PCI device
// ids follow AMD's public data sheets; an MI250X card's figures are split over its two GCDs, each
// a device as the libraries list them. Minimum caps, idle power and thermal constants are
// typical values chosen for the simulation, not specifications (docs/amd.md).
#include <array>

#include "sim/gpu_spec.hpp"

namespace gpuscope::sim {
namespace {

constexpr unsigned kAmdVendor = 0x1002;

struct AmdModel {
  GpuSpec spec;
  AmdSpec amd;
};

AmdModel mi250x() {
  AmdModel m;
  m.spec.model = "MI250X";
  m.spec.name = "AMD Instinct MI250X";
  m.spec.memory_mib = 65536;  // 128 GB HBM2e per card, 64 GB per GCD
  m.spec.pci_device_id = (0x740CU << 16U) | kAmdVendor;
  m.spec.power = {.min_w = 100, .max_w = 280, .default_w = 280, .idle_w = 45};  // 560 W card
  m.spec.clocks = {.max_sm_mhz = 1700, .idle_sm_mhz = 800, .mem_mhz = 1600, .video_mhz = 0};
  m.spec.thermal = {.idle_c = 35,
                    .c_per_w = 0.12,
                    .tau_s = 30,
                    .slowdown_c = 95,
                    .hw_slowdown_c = 105,
                    .memory_offset_c = 6};
  m.spec.ecc = true;
  m.amd = {.gcds_per_card = 2,
           .device_id = 0x740C,
           .energy_counter_bits = 64,
           .xgmi_links = 4,
           .metrics_content_revision = 3};
  return m;
}

AmdModel mi300x() {
  AmdModel m;
  m.spec.model = "MI300X";
  m.spec.name = "AMD Instinct MI300X";
  m.spec.memory_mib = 196608;  // 192 GB HBM3
  m.spec.pci_device_id = (0x74A1U << 16U) | kAmdVendor;
  m.spec.power = {.min_w = 200, .max_w = 750, .default_w = 750, .idle_w = 140};
  m.spec.clocks = {.max_sm_mhz = 2100, .idle_sm_mhz = 150, .mem_mhz = 1300, .video_mhz = 0};
  m.spec.thermal = {.idle_c = 38,
                    .c_per_w = 0.06,
                    .tau_s = 30,
                    .slowdown_c = 100,
                    .hw_slowdown_c = 110,
                    .memory_offset_c = 5};
  m.spec.ecc = true;
  m.amd = {.gcds_per_card = 1,
           .device_id = 0x74A1,
           .energy_counter_bits = 64,
           .xgmi_links = 8,
           .metrics_content_revision = 4};
  return m;
}

const std::array<AmdModel, 2>& amd_models() {
  static const std::array<AmdModel, 2> models = {mi250x(), mi300x()};
  return models;
}

}  // namespace

bool find_amd_model(std::string_view key, GpuSpec& spec, AmdSpec& amd) {
  for (const AmdModel& model : amd_models()) {
    if (model.spec.model != key) continue;
    spec = model.spec;
    amd = model.amd;
    return true;
  }
  return false;
}

std::vector<std::string> amd_model_keys() {
  std::vector<std::string> keys;
  for (const AmdModel& model : amd_models()) keys.push_back(model.spec.model);
  return keys;
}

}  // namespace gpuscope::sim
