// Who a GPU is, as exported series name it: the label values every sample of that GPU carries.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/device_description.hpp"

namespace gpuscope::exporter {

struct GpuIdentity {
  unsigned index = 0;  // NVML index: the `gpu` label
  std::string uuid;
  std::string name;
  std::string pci_bus_id;
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<double> power_limit_w;  // from the description, when a sample has none
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
  id.pci_bus_id = d.pci_bus_id.value_or("");
  id.memory_total_bytes = d.memory_total_bytes;
  id.power_limit_w = d.enforced_power_limit_w ? d.enforced_power_limit_w : d.power_limit_w;
  return id;
}

}  // namespace gpuscope::exporter
