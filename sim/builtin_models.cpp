// Built-in GPU models. Figures come from NVIDIA's public data sheets and nvidia-smi output of the
// SXM parts (names, memory sizes, power ranges, clocks, PCI ids); idle power and the thermal
// constants are typical observed values, not specifications.
#include <array>

#include "nvml/abi.hpp"
#include "sim/gpu_spec.hpp"

namespace gpuscope::sim {
namespace {

constexpr unsigned kNvidiaVendor = 0x10DE;

constexpr unsigned pci_id(unsigned device) {
  return (device << 16U) | kNvidiaVendor;
}

GpuSpec h100_sxm5() {
  GpuSpec spec;
  spec.model = "H100-SXM5-80GB";
  spec.name = "NVIDIA H100 80GB HBM3";
  spec.architecture = nvml::kArchHopper;
  spec.cc_major = 9;
  spec.cc_minor = 0;
  spec.memory_mib = 81559;
  spec.reserved_mib = 552;
  spec.pci_device_id = pci_id(0x2330);
  spec.pci_subsystem_id = pci_id(0x16C1);
  spec.power = {.min_w = 200, .max_w = 700, .default_w = 700, .idle_w = 70};
  spec.clocks = {.max_sm_mhz = 1980, .idle_sm_mhz = 345, .mem_mhz = 2619, .video_mhz = 1755};
  spec.thermal = {.idle_c = 31,
                  .c_per_w = 0.055,
                  .tau_s = 25,
                  .slowdown_c = 87,
                  .hw_slowdown_c = 92,
                  .memory_offset_c = 4};
  spec.gpm = true;
  spec.nvlink = true;
  spec.nvlink_links = 18;  // NVLink 4
  return spec;
}

GpuSpec a100_sxm4() {
  GpuSpec spec;
  spec.model = "A100-SXM4-80GB";
  spec.name = "NVIDIA A100-SXM4-80GB";
  spec.architecture = nvml::kArchAmpere;
  spec.cc_major = 8;
  spec.cc_minor = 0;
  spec.memory_mib = 81920;
  spec.reserved_mib = 589;
  spec.pci_device_id = pci_id(0x20B2);
  spec.pci_subsystem_id = pci_id(0x1463);
  spec.power = {.min_w = 100, .max_w = 400, .default_w = 400, .idle_w = 55};
  spec.clocks = {.max_sm_mhz = 1410, .idle_sm_mhz = 210, .mem_mhz = 1593, .video_mhz = 1290};
  spec.thermal = {.idle_c = 30,
                  .c_per_w = 0.09,
                  .tau_s = 25,
                  .slowdown_c = 88,
                  .hw_slowdown_c = 92,
                  .memory_offset_c = 3};
  spec.gpm = false;  // GPM needs Hopper or newer
  spec.nvlink = true;
  spec.nvlink_links = 12;  // NVLink 3
  // On GA100 nvmlDeviceGetPowerUsage is itself the latest 100 ms reading (Yang et al., SC'24).
  // POWER_INSTANT (186) exists to expose that reading beside the 1 s average that newer GPUs
  // report; the sim models GA100 as not providing it. A modelling choice, to be checked on a
  // real A100.
  spec.power_usage_mode = PowerUsageMode::LatestBucket;
  spec.unsupported_fields = {nvml::kFieldPowerInstant};
  return spec;
}

GpuSpec gh200() {
  GpuSpec spec = h100_sxm5();
  spec.model = "GH200";
  spec.name = "NVIDIA GH200 480GB";
  spec.memory_mib = 97871;
  spec.reserved_mib = 640;
  spec.pci_device_id = pci_id(0x2342);
  spec.pci_subsystem_id = pci_id(0x16EB);
  spec.power = {.min_w = 100, .max_w = 900, .default_w = 900, .idle_w = 90};
  spec.thermal.c_per_w = 0.045;
  spec.module_power = true;
  spec.module_extra_w = 120;
  return spec;
}

// Volta: the one built-in model from before Ampere, so from before row remapping. Its ECC
// errors retire pages instead (nvmlDeviceGetRetiredPages, fields 29-31).
GpuSpec v100_sxm2() {
  GpuSpec spec;
  spec.model = "V100-SXM2-32GB";
  spec.name = "Tesla V100-SXM2-32GB";
  spec.architecture = nvml::kArchVolta;
  spec.cc_major = 7;
  spec.cc_minor = 0;
  spec.memory_mib = 32768;
  spec.reserved_mib = 256;
  spec.pci_device_id = pci_id(0x1DB5);
  spec.pci_subsystem_id = pci_id(0x1249);  // not checked against a real board
  spec.power = {.min_w = 150, .max_w = 300, .default_w = 300, .idle_w = 40};
  spec.clocks = {.max_sm_mhz = 1530, .idle_sm_mhz = 135, .mem_mhz = 877, .video_mhz = 1372};
  spec.thermal = {.idle_c = 33,
                  .c_per_w = 0.12,
                  .tau_s = 25,
                  .slowdown_c = 83,
                  .hw_slowdown_c = 87,
                  .memory_offset_c = 3};
  spec.gpm = false;
  spec.nvlink = true;
  spec.nvlink_links = 6;  // NVLink 2
  // Modelled like GA100: the latest reading, and no separate POWER_INSTANT field.
  spec.power_usage_mode = PowerUsageMode::LatestBucket;
  spec.unsupported_fields = {nvml::kFieldPowerInstant};
  return spec;
}

const std::array<GpuSpec, 4>& builtin_models() {
  static const std::array<GpuSpec, 4> models = {h100_sxm5(), a100_sxm4(), gh200(), v100_sxm2()};
  return models;
}

}  // namespace

const GpuSpec* find_builtin_model(std::string_view key) {
  for (const GpuSpec& spec : builtin_models()) {
    if (spec.model == key) return &spec;
  }
  return nullptr;
}

std::vector<std::string> builtin_model_keys() {
  std::vector<std::string> keys;
  for (const GpuSpec& spec : builtin_models()) keys.push_back(spec.model);
  return keys;
}

}  // namespace gpuscope::sim
