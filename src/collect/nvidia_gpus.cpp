#include "collect/nvidia_gpus.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "collect/describe.hpp"
#include "core/error.hpp"

namespace gpuscope::collect {
namespace {

class NvidiaControl final : public GpuControl {
 public:
  NvidiaControl(nvml::Device device, unsigned index)
      : device_(std::move(device)), index_(index), uuid_(device_.uuid().value_or("")) {}

  unsigned index() const override { return index_; }
  const std::string& uuid() const override { return uuid_; }

  ControlResult<PowerLimits> power_limits() const override {
    auto range = device_.power_limit_constraints_mw();
    auto current = device_.power_limit_mw();
    auto default_limit = device_.default_power_limit_mw();
    if (!range) return tl::unexpected(failure(range.error()));
    if (!current) return tl::unexpected(failure(current.error()));
    if (!default_limit) return tl::unexpected(failure(default_limit.error()));
    return PowerLimits{*current / 1000.0, *default_limit / 1000.0, range->min_mw / 1000.0,
                       range->max_mw / 1000.0};
  }

  ControlResult<void> set_power_limit_w(double watts) const override {
    return done(device_.set_power_limit_mw(static_cast<unsigned>(std::lround(watts * 1000))));
  }

  ControlResult<unsigned> max_sm_clock_mhz() const override {
    auto mhz = device_.max_clock_mhz(nvml::ClockType::Sm);
    if (!mhz) return tl::unexpected(failure(mhz.error()));
    return *mhz;
  }

  ControlResult<void> lock_sm_clock_mhz(unsigned mhz) const override {
    return done(device_.set_locked_clocks_mhz(mhz, mhz));
  }

  ControlResult<void> unlock_clocks() const override { return done(device_.reset_locked_clocks()); }

  std::optional<double> energy_mj() override {
    const auto mj = device_.total_energy_mj();
    return mj ? std::optional<double>(static_cast<double>(*mj)) : std::nullopt;
  }

 private:
  ControlFailure failure(const nvml::Failure& f) const {
    const ControlProblem problem =
        f.code == nvml::kErrorNoPermission ? ControlProblem::Permission
        : f.code == nvml::kErrorNotSupported || f.code == nvml::kErrorFunctionNotFound
            ? ControlProblem::Unsupported
            : ControlProblem::Other;
    return {problem, device_.library().describe(f), {}};
  }
  ControlResult<void> done(const nvml::Status& status) const {
    if (status) return {};
    return tl::unexpected(failure(status.error()));
  }

  nvml::Device device_;
  unsigned index_;
  std::string uuid_;
};

bool has_mig_devices(const std::vector<DeviceDescription>& devices, unsigned gpu) {
  return std::any_of(devices.begin(), devices.end(),
                     [gpu](const auto& d) { return d.mig && d.mig->parent_index == gpu; });
}

}  // namespace

NvidiaGpus::NvidiaGpus(std::shared_ptr<const nvml::Library> library)
    : library_(std::move(library)), session_(library_) {}

void NvidiaGpus::describe(SystemDescription& system) const {
  SystemDescription own = describe_system(session_);
  system.library_path = std::move(own.library_path);
  system.driver_version = std::move(own.driver_version);
  system.nvml_version = std::move(own.nvml_version);
  system.cuda_driver_version = std::move(own.cuda_driver_version);
  system.devices.insert(system.devices.end(), own.devices.begin(), own.devices.end());
}

void NvidiaGpus::describe_details(std::vector<DeviceDescription>& devices,
                                  const BackendOptions& options) const {
  std::vector<std::string> notes;
  describe_saturation(devices, options, notes);
  describe_health(devices, session_);
}

OpenedReaders NvidiaGpus::open_readers(const std::vector<unsigned>& indices,
                                       std::vector<DeviceDescription>& descriptions,
                                       const BackendOptions& options,
                                       std::chrono::nanoseconds interval) const {
  return collect::open_readers(session_, indices, descriptions, options, interval);
}

std::optional<WatchedDevice> NvidiaGpus::watched(
    const DeviceDescription& d, const std::vector<DeviceDescription>& sampled) const {
  if (d.mig) {
    // A MIG device's own list: its instance's processes, which its GPU's list refuses to an
    // unprivileged user (docs/mig.md).
    if (auto device = find_mig_device(session_, d)) {
      return WatchedDevice{d.index, nvidia_process_lister(std::move(*device))};
    }
    return std::nullopt;
  }
  // A GPU whose MIG devices are sampled has its processes looked at there.
  if (has_mig_devices(sampled, d.index)) return std::nullopt;
  if (auto device = session_.try_device(d.index)) {
    return WatchedDevice{d.index, nvidia_process_lister(std::move(*device))};
  }
  return std::nullopt;
}

std::unique_ptr<GpuControl> NvidiaGpus::control(const DeviceDescription& d) const {
  return std::make_unique<NvidiaControl>(session_.device(d.index), d.index);
}

std::optional<unsigned> NvidiaGpus::mig_parent(const std::string& mig_uuid) const {
  auto parent = session_.parent_of_mig(mig_uuid);
  return parent ? std::optional<unsigned>(parent->index()) : std::nullopt;
}

std::vector<unsigned> NvidiaGpus::mig_device_pids(const DeviceDescription& mig) const {
  std::vector<unsigned> pids;
  if (!mig.mig) return pids;
  const nvml::Device parent = session_.device(mig.mig->parent_index);
  auto handle = parent.mig_device(mig.mig->mig_index);
  if (!handle || !*handle) return pids;
  auto processes = (*handle)->compute_processes();
  if (!processes) return pids;
  for (const nvml::ProcessInfo& p : *processes) pids.push_back(p.pid);
  return pids;
}

ProcessLister nvidia_process_lister(nvml::Device device) {
  // The newest utilization sample seen, shared by the copies of the lister.
  auto since = std::make_shared<std::uint64_t>(0);
  return [device = std::move(device), since]() -> std::optional<std::vector<ListedProcess>> {
    auto processes = device.compute_processes();
    if (!processes) return std::nullopt;
    std::vector<ListedProcess> out;
    for (const auto& p : *processes) out.push_back({p.pid, p.used_memory_bytes, {}, {}});
    if (out.empty()) return out;
    // Per-process utilization since the previous look at this device, where the driver keeps it.
    std::map<unsigned, nvml::ProcessUtilization> utilization;
    if (auto samples = device.process_utilization(*since)) {
      for (const auto& u : *samples) {
        auto& slot = utilization[u.pid];
        if (u.timestamp_us >= slot.timestamp_us) slot = u;
        *since = std::max(*since, u.timestamp_us);
      }
    }
    for (auto& p : out) {
      if (auto u = utilization.find(p.pid); u != utilization.end()) {
        p.sm_percent = u->second.sm_percent;
        p.memory_percent = u->second.memory_percent;
      }
    }
    return out;
  };
}

bool nvidia_absent(const Error& error) {
  return nvml::is_no_driver(error);
}

}  // namespace gpuscope::collect
