// The one GPU interface: what gpuscope asks of a vendor's GPUs, whichever library answers (nvtop's
// model: one table of operations per vendor). Each vendor is one implementation, living in
// collect/ on top of its folder: NVIDIA's (collect/nvidia_gpus.hpp: NVML, with DCGM as its
// alternative source of saturation metrics) and AMD's (collect/amd_gpus.hpp: AMD SMI, else ROCm
// SMI). Above collect/, GPUs are seen through this and collect/node_gpus.hpp only: nothing there
// names a vendor's library or tests a vendor by its word.
//
// The operations, per vendor:
//   identity   which GPUs (and MIG devices) it has, described as DeviceDescription rows
//   sampling   a GpuReader per device (collect/gpu_reader.hpp), health readers among them
//   processes  a ProcessLister per device: who uses it, and how much
//   control    a GpuControl per GPU (collect/gpu_control.hpp): power limits, locked clocks
//   MIG        a MIG device's parent, the pids on a MIG device (for the sweep's guard)
//
// A third vendor is a folder beside nvml/ and amd/ for its library, one class deriving from
// VendorGpus in collect/ (with its reader and control), an enumerator of Vendor, and its opening
// in collect/node_gpus.cpp (how to open it, and which of its errors only say "none here").
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collect/backend.hpp"
#include "collect/gpu_control.hpp"
#include "collect/saturation.hpp"
#include "core/device_description.hpp"
#include "core/vendor.hpp"

namespace gpuscope::collect {

// One process on a device at one look of a ProcessLister.
struct ListedProcess {
  unsigned pid = 0;
  std::optional<std::uint64_t> used_memory_bytes;
  // Its share of the device since the lister's previous look, percent, where the library keeps
  // it: NVIDIA's SM and memory utilization per process; an AMD GPU's share of the graphics
  // engine's time (the difference of AMD SMI's engine_usage.gfx over the time between). None at
  // a process's first look.
  std::optional<double> sm_percent;
  std::optional<double> memory_percent;
};

// One look at a device's processes; nullopt when the library could not say this time (a GPU
// resetting) or cannot at all. A lister keeps what it needs from one look to the next.
using ProcessLister = std::function<std::optional<std::vector<ListedProcess>>()>;

// A device whose processes are looked at: the row index its process rows get (a GPU's index, a
// MIG device's row index, core/mig.hpp) and its lister.
struct WatchedDevice {
  unsigned row_index = 0;
  ProcessLister list;
};

// One vendor's GPUs on the node, its library opened.
class VendorGpus {
 public:
  virtual ~VendorGpus() = default;

  // Identity: which vendor this is (core/vendor.hpp), as DeviceDescription::vendor holds it.
  virtual Vendor vendor() const = 0;
  // Whether `d` is one of this vendor's devices.
  bool owns(const DeviceDescription& d) const { return d.vendor == vendor(); }
  // Adds this vendor's devices to `system`: its GPUs after the GPUs already there (their
  // indices following on), its MIG devices after every GPU, and what it says of its library.
  virtual void describe(SystemDescription& system) const = 0;
  // For `gpuscope devices`: what `devices` (this vendor's) would sample from where, and their
  // health counters now.
  virtual void describe_details(std::vector<DeviceDescription>& devices,
                                const BackendOptions& options) const = 0;

  // Sampling: the readers of `indices` (this vendor's devices; `descriptions` parallel to it,
  // updated with where each one's saturation metrics come from), in that order. A device gone
  // since it was described gets no reader.
  virtual OpenedReaders open_readers(const std::vector<unsigned>& indices,
                                     std::vector<DeviceDescription>& descriptions,
                                     const BackendOptions& options,
                                     std::chrono::nanoseconds interval) const = 0;

  // Processes: how to look at the processes of `d` (one of this vendor's devices among
  // `sampled`, the devices a run samples); nullopt when they are looked at elsewhere (a GPU whose
  // MIG devices are sampled: on each of those) or `d` cannot be opened.
  virtual std::optional<WatchedDevice> watched(
      const DeviceDescription& d, const std::vector<DeviceDescription>& sampled) const = 0;

  // Control: the settings of GPU `d` (no MIG device). Throws Error when it cannot be opened.
  virtual std::unique_ptr<GpuControl> control(const DeviceDescription& d) const = 0;

  // MIG: the index of the GPU the MIG device `mig_uuid` ("MIG-...") is part of; nullopt when
  // this vendor has no such device.
  virtual std::optional<unsigned> mig_parent(const std::string& mig_uuid) const = 0;
  // MIG: the pids running on the MIG device `mig` (a row of describe), as an unprivileged caller
  // may read them (the MIG device's own list); empty when it cannot say. Throws Error when its
  // GPU cannot be opened.
  virtual std::vector<unsigned> mig_device_pids(const DeviceDescription& mig) const = 0;
};

}  // namespace gpuscope::collect
