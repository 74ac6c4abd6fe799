// What gpuscope knows about a GPU and its driver before sampling: identity, limits, and which
// metric groups it offers. Plain data; filled by collect/, shown by report/, stored by store/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/health.hpp"
#include "core/mig.hpp"
#include "core/vendor.hpp"

namespace gpuscope {

// One metric group a GPU may or may not offer, probed once.
struct Capability {
  std::string key;    // stable identifier used in JSON, e.g. "gpm", "energy_counter"
  std::string label;  // words for people, e.g. "GPM saturation metrics"
  bool supported = false;
  std::string detail;  // why not, when unsupported ("Not Supported", "Function Not Found", ...)
};

struct DeviceDescription {
  // NVML index of a GPU; for a MIG device, its row index (core/mig.hpp: mig_device_index); for an
  // AMD GPU, the number of NVIDIA GPUs plus its index in its library (docs/amd.md).
  unsigned index = 0;
  // Which vendor's library answers for it.
  Vendor vendor = Vendor::Nvidia;
  // An AMD GPU's index in AMD SMI's or ROCm SMI's order (nullopt for NVIDIA's).
  std::optional<unsigned> vendor_index;
  std::optional<std::string> error;  // set when the GPU could not be opened at all (e.g. lost)
  std::optional<std::string> name;
  std::optional<std::string> uuid;
  std::optional<std::string> pci_bus_id;
  std::optional<std::string> architecture;
  std::optional<std::string> compute_capability;  // "9.0"
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<double> power_limit_w;           // current (management) limit
  std::optional<double> enforced_power_limit_w;  // the limit in force (min of all limiters)
  std::optional<double> default_power_limit_w;
  std::optional<double> min_power_limit_w;
  std::optional<double> max_power_limit_w;
  std::optional<unsigned> max_sm_clock_mhz;
  std::optional<unsigned> max_memory_clock_mhz;
  std::optional<unsigned> max_graphics_clock_mhz;
  std::vector<Capability> capabilities;
  // Where the saturation metrics (SM active, tensor, DRAM, ...) come from: "gpm" or "dcgm";
  // nullopt: nowhere (docs/sources.md). saturation_detail says how, or why not.
  std::optional<std::string> saturation_source;
  std::optional<std::string> saturation_detail;
  // The GPU's health counters now (`gpuscope devices` only; not stored with a run, whose
  // health_samples table holds them over time).
  std::optional<HealthRow> health;
  // A GPU: whether MIG mode is on now (nullopt: the GPU cannot do MIG, or could not say).
  std::optional<bool> mig_enabled;
  // A MIG device: who it is. Its power, temperature and clocks are its parent's; its name is
  // NVML's ("NVIDIA H100 80GB HBM3 MIG 1g.10gb"), its memory_total_bytes its own.
  std::optional<MigIdentity> mig;

  bool supports(const std::string& key) const {
    for (const auto& c : capabilities) {
      if (c.key == key) return c.supported;
    }
    return false;
  }
};

// The AMD GPUs and the library that lists them (AMD SMI, else ROCm SMI; docs/amd.md).
struct AmdSystemDescription {
  std::string library;  // "AMD SMI" or "ROCm SMI"
  std::string library_path;
  std::optional<std::string> library_version;
  std::optional<std::string> fallback_reason;  // why AMD SMI was not used, when ROCm SMI was
  // In the library's order; index: the number of NVIDIA GPUs on the node plus that order.
  std::vector<DeviceDescription> devices;
};

struct SystemDescription {
  // false when no NVIDIA GPU is listed because there is no NVIDIA library or GPU (a node with
  // AMD GPUs only): the NVIDIA fields below are then empty.
  bool nvidia = true;
  std::optional<AmdSystemDescription> amd;
  std::string library_path;
  std::optional<std::string> scenario;  // set when the GPUs are simulated
  std::optional<std::string> driver_version;
  std::optional<std::string> nvml_version;
  std::optional<std::string> cuda_driver_version;
  std::vector<DeviceDescription> devices;
  // What the user should know about the vendor not listed: its library is present but failed
  // (a permission, a driver) while the other vendor's GPUs are listed.
  std::vector<std::string> notes;
};

}  // namespace gpuscope
