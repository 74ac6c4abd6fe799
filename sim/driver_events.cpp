// Event sets. Like GPM samples they belong to the caller, not to an nvmlInit, so the driver keeps
// a registry to reject sets it did not hand out. Nothing queues events yet (scenario faults for
// Xids and ECC errors are to come), so a wait on a healthy GPU always times out.
#include <algorithm>
#include <chrono>
#include <thread>

#include "sim/driver.hpp"

namespace gpuscope::sim {

bool Driver::is_live_event_set(const nvmlEventSet_st* set) const {
  return set != nullptr &&
         std::find(event_sets_.begin(), event_sets_.end(), set) != event_sets_.end();
}

nvmlReturn_t Driver::event_set_create(nvmlEventSet_t* set) {
  return system_call(Entry::EventSetCreate, [&](const Scenario&) {
    if (set == nullptr) return nvml::kErrorInvalidArgument;
    set->handle = new nvmlEventSet_st{};
    event_sets_.push_back(set->handle);
    return nvml::kSuccess;
  });
}

nvmlReturn_t Driver::register_events(nvmlDevice_t handle, unsigned long long types,
                                     nvmlEventSet_t set) {
  return device_call(
      Entry::DeviceRegisterEvents, handle, [&](SimDevice& device, const CallContext&) {
        if (!is_live_event_set(set.handle)) return nvml::kErrorInvalidArgument;
        // Some requested type unsupported: none is registered, the set stays usable (nvml.h).
        if ((types & ~supported_event_types(device.model.config().spec)) != 0) {
          return nvml::kErrorNotSupported;
        }
        auto& registrations = set.handle->registrations;
        const auto same_gpu = [&](const nvmlEventSet_st::Registration& r) {
          return r.device == device.handle.index && r.generation == generation_;
        };
        if (auto it = std::find_if(registrations.begin(), registrations.end(), same_gpu);
            it != registrations.end()) {
          it->mask |= types;
        } else {
          registrations.push_back({device.handle.index, generation_, types});
        }
        return nvml::kSuccess;
      });
}

nvmlReturn_t Driver::take_event(nvmlEventSet_st& set, const CallContext& context,
                                nvmlEventData_t& out) {
  for (const auto& registration : set.registrations) {
    if (registration.generation != generation_ || registration.device >= devices_.size()) continue;
    if (context.scenario_ns >= devices_[registration.device]->lost_at_ns) {
      return fail_call(nvml::kErrorGpuIsLost, Entry::EventSetWait, "the GPU has fallen off the bus",
                       registration.device);
    }
  }
  if (set.queue.empty()) return nvml::kErrorTimeout;
  out = set.queue.front();
  set.queue.pop_front();
  return nvml::kSuccess;
}

nvmlReturn_t Driver::event_set_wait(nvmlEventSet_t set, nvmlEventData_t* data,
                                    unsigned int timeout_ms) {
  const auto attempt = [&] {
    return system_call(Entry::EventSetWait, [&](const Scenario&) {
      if (data == nullptr || !is_live_event_set(set.handle)) return nvml::kErrorInvalidArgument;
      CallContext context;
      context.realtime_ns = clock_.realtime_ns();
      context.scenario_ns = to_scenario_ns(context.realtime_ns);
      return take_event(*set.handle, context, *data);
    });
  };
  nvmlReturn_t result = attempt();
  if (result != nvml::kErrorTimeout || timeout_ms == 0) return result;
  // Nothing queued: sleep (outside the lock) for the timeout, never longer, then look once more.
  std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
  return attempt();
}

nvmlReturn_t Driver::event_set_free(nvmlEventSet_t set) {
  std::lock_guard lock(mutex_);
  const auto it = std::find(event_sets_.begin(), event_sets_.end(), set.handle);
  if (it == event_sets_.end()) return nvml::kErrorInvalidArgument;
  event_sets_.erase(it);
  delete set.handle;
  return nvml::kSuccess;
}

}  // namespace gpuscope::sim
