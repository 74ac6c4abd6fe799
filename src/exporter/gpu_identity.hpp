// Who a GPU is, as exported series name it: the label values every sample of that GPU carries.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/device_description.hpp"
#include "core/vendor.hpp"

namespace gpuscope::exporter {

// A MIG device is exported as dcgm-exporter exports a GPU instance: under its parent GPU's
// `gpu`, UUID, PCI bus id and model, with the instance's own labels beside them
// (docs/live.md, "MIG").
struct GpuIdentity {
  unsigned index = 0;  // the row index of the samples (NVML index of a GPU)
  std::string uuid;    // the GPU's UUID (a MIG device's parent's)
  std::string name;
  Vendor vendor = Vendor::Nvidia;  // the `vendor` label (docs/amd.md)
  std::string pci_bus_id;
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<double> power_limit_w;  // from the description, when a sample has none
  std::optional<MigIdentity> mig;       // set for a MIG device
  std::string mig_uuid;                 // a MIG device's own UUID ("MIG-...")
  std::string mig_name;                 // a MIG device's own name ("... MIG 1g.18gb")

  // The `gpu` label: the NVML index of the GPU (a MIG device's parent's).
  unsigned gpu() const { return mig ? mig->parent_index : index; }
};

// What every series of this process carries besides the GPU's own labels: the host and, under
// SLURM, the job's labels (`slurm_job_id`, ...). Values are raw; exposition escapes them.
struct ExportLabels {
  std::string hostname;
  std::vector<std::pair<std::string, std::string>> extra;
  std::string driver_version;  // dcgm naming mode only (DCGM_FI_DRIVER_VERSION)
};

// The node's name on exported series (`hostname`, dcgm's `Hostname`): the one given
// (--node-name, GPUSCOPE_NODE_NAME), else the scheduler's (SLURMD_NODENAME in a SLURM job,
// NODE_NAME, the downward API's spec.nodeName, in a Kubernetes pod, whose own host name is the
// pod's), else the host's short name.
inline std::string node_label(const std::string& given, const std::optional<std::string>& scheduler,
                              const std::string& host) {
  if (!given.empty()) return given;
  if (scheduler && !scheduler->empty()) return *scheduler;
  return host;
}

inline GpuIdentity identity_of(const DeviceDescription& d) {
  GpuIdentity id;
  id.index = d.index;
  id.uuid = d.uuid.value_or("");
  id.name = d.name.value_or("");
  id.vendor = d.vendor;
  id.pci_bus_id = d.pci_bus_id.value_or("");
  id.memory_total_bytes = d.memory_total_bytes;
  id.power_limit_w = d.enforced_power_limit_w ? d.enforced_power_limit_w : d.power_limit_w;
  return id;
}

// The identities of `devices`, a MIG device's under its parent's UUID, PCI bus id and model
// name when its parent is among `devices` (else under its own).
inline std::vector<GpuIdentity> identities_of(const std::vector<DeviceDescription>& devices) {
  std::vector<GpuIdentity> out;
  for (const DeviceDescription& d : devices) {
    GpuIdentity id = identity_of(d);
    if (d.mig) {
      id.mig = d.mig;
      id.mig_uuid = id.uuid;
      id.mig_name = id.name;
      id.power_limit_w.reset();  // the parent's
      for (const DeviceDescription& parent : devices) {
        if (parent.mig || parent.index != d.mig->parent_index) continue;
        id.uuid = parent.uuid.value_or("");
        id.name = parent.name.value_or("");
        id.pci_bus_id = parent.pci_bus_id.value_or("");
      }
    }
    out.push_back(std::move(id));
  }
  return out;
}

}  // namespace gpuscope::exporter
