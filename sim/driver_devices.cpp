// Driver calls that find devices or change their state.
#include <cstring>
#include <string>

#include "sim/driver.hpp"

namespace gpuscope::sim {

nvmlReturn_t Driver::device_count(Entry entry, unsigned int* count) {
  return system_call(entry, [&](const Scenario& scenario) {
    if (count == nullptr) return nvml::kErrorInvalidArgument;
    // Lost GPUs still count: the driver enumerated them at load time, like the real one.
    *count = static_cast<unsigned int>(scenario.gpus.size());
    return nvml::kSuccess;
  });
}

nvmlReturn_t Driver::handle_by_index(Entry entry, unsigned int index, nvmlDevice_t* device) {
  return system_call(entry, [&](const Scenario&) {
    if (device == nullptr || index >= devices_.size()) return nvml::kErrorInvalidArgument;
    SimDevice& sim = *devices_[index];
    if (to_scenario_ns(clock_.realtime_ns()) >= sim.lost_at_ns) {
      return fail_call(nvml::kErrorGpuIsLost, entry, "the GPU has fallen off the bus", index);
    }
    *device = &sim.handle;
    return nvml::kSuccess;
  });
}

nvmlReturn_t Driver::handle_by_uuid(const char* uuid, nvmlDevice_t* device) {
  return system_call(Entry::DeviceGetHandleByUUID, [&](const Scenario&) {
    if (uuid == nullptr || device == nullptr) return nvml::kErrorInvalidArgument;
    for (const auto& sim : devices_) {
      const GpuConfig& config = sim->model.config();
      nvmlDevice_t found = nullptr;
      if (config.uuid == uuid) found = &sim->handle;
      for (std::size_t i = 0; found == nullptr && i < config.mig_devices.size(); ++i) {
        if (config.mig_devices[i] == uuid) found = &sim->mig_handles[i];
      }
      const std::int64_t now = to_scenario_ns(clock_.realtime_ns());
      for (std::size_t i = 0; found == nullptr && i < sim->instances.size(); ++i) {
        const MigInstance& instance = sim->instances[i];
        if (instance.spec().uuid != uuid) continue;
        if (!instance.live_at(now)) return nvml::kErrorNotFound;
        found = &sim->mig_handles[config.mig_devices.size() + i];
      }
      if (found == nullptr) continue;
      if (to_scenario_ns(clock_.realtime_ns()) >= sim->lost_at_ns) {
        return fail_call(nvml::kErrorGpuIsLost, Entry::DeviceGetHandleByUUID,
                         "the GPU has fallen off the bus", sim->handle.index);
      }
      *device = found;
      return nvml::kSuccess;
    }
    return nvml::kErrorNotFound;
  });
}

nvmlReturn_t Driver::mig_handle_by_index(nvmlDevice_t handle, unsigned int index,
                                         nvmlDevice_t* out) {
  constexpr Entry kEntry = Entry::DeviceGetMigDeviceHandleByIndex;
  return device_call(kEntry, handle, [&](SimDevice& device, const CallContext& context) {
    const std::size_t gpu = device.handle.index;
    const GpuConfig& config = device.model.config();
    if (out == nullptr) return nvml::kErrorInvalidArgument;
    if (!mig_enabled_at(config, context.scenario_ns)) {
      return fail_call(nvml::kErrorNotFound, kEntry, "MIG is off", gpu);
    }
    if (index >= kMaxMigDevices) {
      return fail_call(nvml::kErrorInvalidArgument, kEntry, "index past the MIG device count", gpu);
    }
    const std::size_t legacy = config.mig_devices.size();
    if (index < legacy) {
      *out = &device.mig_handles[index];
      return nvml::kSuccess;
    }
    if (index - legacy < device.instances.size() &&
        device.instances[index - legacy].live_at(context.scenario_ns)) {
      *out = &device.mig_handles[index];
      return nvml::kSuccess;
    }
    return fail_call(nvml::kErrorNotFound, kEntry, "no MIG device at this index now", gpu);
  });
}

template <class Fn>
nvmlReturn_t Driver::handle_call(Entry entry, nvmlDevice_t handle, Fn&& fn) {
  CallContext context;
  nvmlReturn_t result;
  {
    std::lock_guard lock(mutex_);
    HandleTarget target;
    result = begin_handle_call(entry, handle, context, target);
    if (result == nvml::kSuccess) result = check_not_supported(entry, *target.device);
    if (result == nvml::kSuccess) result = fn(target, context);
  }
  pause(context);
  return result;
}

nvmlReturn_t Driver::is_mig_handle(nvmlDevice_t handle, unsigned int* is_mig) {
  // Says what the handle is without touching the GPU, so it answers for a lost GPU too.
  return handle_call(Entry::DeviceIsMigDeviceHandle, handle,
                     [&](const HandleTarget& target, const CallContext&) {
                       if (is_mig == nullptr) return nvml::kErrorInvalidArgument;
                       *is_mig = target.mig ? 1U : 0U;
                       return nvml::kSuccess;
                     });
}

nvmlReturn_t Driver::parent_of_mig(nvmlDevice_t mig_handle, nvmlDevice_t* parent) {
  constexpr Entry kEntry = Entry::DeviceGetDeviceHandleFromMigDeviceHandle;
  return handle_call(kEntry, mig_handle, [&](const HandleTarget& target, const CallContext& call) {
    const std::size_t gpu = target.device->handle.index;
    if (parent == nullptr) return nvml::kErrorInvalidArgument;
    if (!target.mig) {
      return fail_call(nvml::kErrorInvalidArgument, kEntry, "not a MIG device handle", gpu);
    }
    if (call.scenario_ns >= target.device->lost_at_ns) {
      return fail_call(nvml::kErrorGpuIsLost, kEntry, "the parent GPU has fallen off the bus", gpu);
    }
    *parent = &target.device->handle;
    return nvml::kSuccess;
  });
}

nvmlReturn_t Driver::set_power_limit(nvmlDevice_t handle, unsigned int milliwatts) {
  constexpr Entry kEntry = Entry::DeviceSetPowerManagementLimit;
  return device_call(kEntry, handle, [&](SimDevice& device, const CallContext& context) {
    const std::size_t gpu = device.handle.index;
    if (!privileged_) {
      return fail_call(nvml::kErrorNoPermission, kEntry,
                       "needs root (GPUSCOPE_SIM_PRIVILEGED=0 or the scenario's privileged: false)",
                       gpu);
    }
    const PowerSpec& power = device.model.config().spec.power;
    if (milliwatts < power.min_w * 1000 || milliwatts > power.max_w * 1000) {
      const std::string what = std::to_string(milliwatts) + " mW is outside the constraints [" +
                               std::to_string(static_cast<unsigned>(power.min_w * 1000)) + ", " +
                               std::to_string(static_cast<unsigned>(power.max_w * 1000)) + "] mW";
      return fail_call(nvml::kErrorInvalidArgument, kEntry, what.c_str(), gpu);
    }
    const LockedClocks lock = device.model.locked_clocks();
    StateEntry entry;
    entry.power_limit_mw = milliwatts;
    entry.locked_min_mhz = lock.min_mhz;
    entry.locked_max_mhz = lock.max_mhz;
    entry.set_at_unix_ns = context.realtime_ns;
    entry.speed = device.model.steady_speed(milliwatts, lock.max_mhz);
    // Persist first: a limit the other processes cannot see would split the timeline.
    const tl::expected<void, std::string> written =
        state_->update({{device.model.config().uuid, entry}});
    if (!written) return fail_call(nvml::kErrorUnknown, kEntry, written.error().c_str(), gpu);
    device.limit_set_at_unix_ns = entry.set_at_unix_ns;
    device.model.set_power_limit(milliwatts, context.scenario_ns);
    return nvml::kSuccess;
  });
}

nvmlReturn_t Driver::set_locked_clocks(Entry call_entry, nvmlDevice_t handle, LockedClocks lock) {
  return device_call(call_entry, handle, [&](SimDevice& device, const CallContext& context) {
    const std::size_t gpu = device.handle.index;
    if (!privileged_) {
      return fail_call(nvml::kErrorNoPermission, call_entry,
                       "needs root (GPUSCOPE_SIM_PRIVILEGED=0 or the scenario's privileged: false)",
                       gpu);
    }
    const ClockSpec& clocks = device.model.config().spec.clocks;
    if (lock.locked() && !locked_clocks_valid(clocks, lock)) {
      const std::string what =
          "locked clocks [" + std::to_string(lock.min_mhz) + ", " + std::to_string(lock.max_mhz) +
          "] MHz are not an interval within the supported SM clocks [" +
          std::to_string(clocks.idle_sm_mhz) + ", " + std::to_string(clocks.max_sm_mhz) + "] MHz";
      return fail_call(nvml::kErrorInvalidArgument, call_entry, what.c_str(), gpu);
    }
    const unsigned limit_mw = device.model.power_limit_mw();
    StateEntry entry;
    entry.power_limit_mw = limit_mw;
    entry.locked_min_mhz = lock.min_mhz;
    entry.locked_max_mhz = lock.max_mhz;
    entry.set_at_unix_ns = context.realtime_ns;
    entry.speed = device.model.steady_speed(limit_mw, lock.max_mhz);
    // Persist first, as for a power limit.
    const tl::expected<void, std::string> written =
        state_->update({{device.model.config().uuid, entry}});
    if (!written) return fail_call(nvml::kErrorUnknown, call_entry, written.error().c_str(), gpu);
    device.limit_set_at_unix_ns = entry.set_at_unix_ns;
    device.model.set_locked_clocks(lock, context.scenario_ns);
    return nvml::kSuccess;
  });
}

}  // namespace gpuscope::sim
