// AMD's GPUs through the one GPU interface (collect/gpu_vendor.hpp): AMD SMI, else ROCm SMI, for
// identity, sampling (collect/amd_reader.hpp), processes and the power cap (docs/amd.md). AMD GPUs
// have no MIG devices, and their health counters are not read.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "amd/session.hpp"
#include "collect/gpu_vendor.hpp"

namespace gpuscope::collect {

class AmdGpus final : public VendorGpus {
 public:
  explicit AmdGpus(std::unique_ptr<amd::Session> session);

  Vendor vendor() const override { return Vendor::Amd; }
  // The AMD GPUs and their library into system.amd, their indices following the GPUs already in
  // system.devices (docs/amd.md).
  void describe(SystemDescription& system) const override;
  void describe_details(std::vector<DeviceDescription>&, const BackendOptions&) const override {}
  OpenedReaders open_readers(const std::vector<unsigned>& indices,
                             std::vector<DeviceDescription>& descriptions,
                             const BackendOptions& options,
                             std::chrono::nanoseconds interval) const override;
  std::optional<WatchedDevice> watched(
      const DeviceDescription& d, const std::vector<DeviceDescription>& sampled) const override;
  std::unique_ptr<GpuControl> control(const DeviceDescription& d) const override;
  std::optional<unsigned> mig_parent(const std::string&) const override { return std::nullopt; }
  std::vector<unsigned> mig_device_pids(const DeviceDescription&) const override { return {}; }

 private:
  const amd::Device& device_of(const DeviceDescription& d, const char* what) const;

  std::unique_ptr<amd::Session> session_;
};

// The process lister of AMD GPU `vendor_index` of `session` (which outlives it). It keeps each
// process's graphics time from one look to the next, for its share of the graphics engine.
ProcessLister amd_process_lister(const amd::Session& session, unsigned vendor_index);

}  // namespace gpuscope::collect
