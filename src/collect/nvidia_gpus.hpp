// NVIDIA's GPUs through the one GPU interface (collect/gpu_vendor.hpp): NVML for identity,
// sampling (with DCGM or GPM as the source of saturation metrics, collect/saturation.hpp), health,
// processes and control, and its MIG devices.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collect/gpu_vendor.hpp"
#include "nvml/device.hpp"
#include "nvml/library.hpp"
#include "nvml/session.hpp"

namespace gpuscope::collect {

class NvidiaGpus final : public VendorGpus {
 public:
  // Initialises NVML over `library`; throws Error as nvml::Session does.
  explicit NvidiaGpus(std::shared_ptr<const nvml::Library> library);

  Vendor vendor() const override { return Vendor::Nvidia; }
  // NVML's GPUs (then their MIG devices) into system.devices, NVML's library and versions.
  void describe(SystemDescription& system) const override;
  void describe_details(std::vector<DeviceDescription>& devices,
                        const BackendOptions& options) const override;
  OpenedReaders open_readers(const std::vector<unsigned>& indices,
                             std::vector<DeviceDescription>& descriptions,
                             const BackendOptions& options,
                             std::chrono::nanoseconds interval) const override;
  std::optional<WatchedDevice> watched(
      const DeviceDescription& d, const std::vector<DeviceDescription>& sampled) const override;
  std::unique_ptr<GpuControl> control(const DeviceDescription& d) const override;
  std::optional<unsigned> mig_parent(const std::string& mig_uuid) const override;
  std::vector<unsigned> mig_device_pids(const DeviceDescription& mig) const override;

  const nvml::Library& library() const { return *library_; }

 private:
  std::shared_ptr<const nvml::Library> library_;
  nvml::Session session_;
};

// The process lister of an NVIDIA GPU or MIG device: NVML's running compute processes, with
// their SM and memory utilization since the previous look where the driver keeps it.
ProcessLister nvidia_process_lister(nvml::Device device);

// Whether an error opening NVML only says there is no NVIDIA driver here.
bool nvidia_absent(const Error& error);

}  // namespace gpuscope::collect
