// The node's GPUs of every vendor, each vendor opened through the one GPU interface
// (collect/gpu_vendor.hpp): NVIDIA's through NVML (with their MIG devices), AMD's through AMD SMI
// or ROCm SMI, described in one list in which AMD GPUs follow the NVIDIA GPUs (docs/amd.md). A
// node with GPUs of one vendor only needs only that vendor's library. profile, sweep, monitor,
// serve and devices see the node's GPUs through this alone.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collect/backend.hpp"
#include "collect/gpu_control.hpp"
#include "collect/gpu_selection.hpp"
#include "collect/gpu_vendor.hpp"
#include "collect/saturation.hpp"
#include "core/device_description.hpp"

namespace gpuscope::collect {

struct NodeGpus {
  // The vendors whose libraries are open, NVIDIA's first; none: no GPU library here.
  std::vector<std::unique_ptr<VendorGpus>> vendors;
  // devices: the NVIDIA GPUs (NVML indices), then the AMD GPUs (indices from the NVIDIA GPUs'
  // count on), with the MIG devices' rows (1000 and up) among the NVIDIA ones.
  SystemDescription system;
  // What the user should know: a vendor's library present that failed while the other's
  // GPUs are sampled.
  std::vector<std::string> notes;

  // The vendor that answers for `d`; nullptr when its library is not open.
  const VendorGpus* vendor_of(const DeviceDescription& d) const;
};

// Opens every vendor's library (--simulate: all simulated over the scenario). Throws Error
// when no vendor lists a GPU and one of them failed for a reason worth saying (NVML's error when
// no vendor's library is here); a node whose NVML lists no GPU and has no AMD GPU returns
// with no device, as before.
NodeGpus open_node_gpus(const BackendOptions& options);

// For `gpuscope devices`: the GPUs of the vendor named `vendor` ("all", "nvidia" or "amd"),
// with where each would take its saturation metrics from and its health counters now. With
// "all", a vendor with no library or no GPU is left out silently; when none has a GPU, the error
// says why (NVML's, unless the AMD library found AMD GPUs it could not use). With one vendor,
// that vendor's error. Throws Error (Error::usage for a word that names no vendor).
SystemDescription describe_node(const BackendOptions& options, std::string_view vendor);

// The readers of the devices `indices` (descriptions parallel to it, each updated with where its
// saturation metrics come from), each from its vendor, in the order of `indices`. A MIG device
// gone since it was described has none.
OpenedReaders open_node_readers(const NodeGpus& node, const std::vector<unsigned>& indices,
                                std::vector<DeviceDescription>& descriptions,
                                const BackendOptions& options, std::chrono::nanoseconds interval);

// The devices whose process lists to look at when `sampled` (GPUs and MIG devices) are sampled,
// in that order: each MIG device's own list (its instance's processes with its row index, which
// its GPU's list refuses to an unprivileged user), and each GPU without sampled MIG devices. A
// device that cannot be opened, or whose vendor's library is not open, is left out.
std::vector<WatchedDevice> watched_devices(const NodeGpus& node,
                                           const std::vector<DeviceDescription>& sampled);

// The controls of the node's GPUs `indices` (GPUs, not MIG devices), in that order; throws Error
// for an index that is no GPU of the node.
GpuControls open_controls(const NodeGpus& node, const std::vector<unsigned>& indices);

// Every GPU of the node (to restore by UUID).
GpuControls open_all_controls(const NodeGpus& node);

// The resolver over the node's MIG devices: a MIG UUID's parent GPU (nullopt for a UUID that is
// no MIG device of this node, as on a node without NVIDIA GPUs).
MigResolver mig_resolver(const NodeGpus& node);

// The pids running on the MIG device `mig` (one of node.system.devices), as an unprivileged
// caller may read them; empty when its vendor cannot say. Throws Error when its GPU cannot be
// opened.
std::vector<unsigned> mig_device_pids(const NodeGpus& node, const DeviceDescription& mig);

}  // namespace gpuscope::collect
