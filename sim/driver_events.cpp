// Event sets. Like GPM samples they belong to the caller, not to an nvmlInit, so the driver keeps
// a registry to reject sets it did not hand out. Events come from the GPUs' health fault steps
// (sim/health.hpp): a wait queues those of the registered types that fell due since the last
// look, in time order, and delivers one.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "sim/driver.hpp"
#include "sim/health.hpp"

namespace gpuscope::sim {
namespace {

// The shortest sleep of a wait that expects an event: no busy loop on rounding.
constexpr std::int64_t kMinSleepNs = 100'000;

struct DueEvent {
  std::int64_t at_ns = 0;
  std::size_t device = 0;
  std::size_t step = 0;
  std::size_t rank = 0;  // position among the step's events
  nvmlEventData_t data{};
};

// The first of the steps (sorted by time) after t_ns.
std::size_t first_after(const std::vector<HealthStep>& steps, std::int64_t t_ns) {
  const auto it = std::partition_point(
      steps.begin(), steps.end(), [&](const HealthStep& step) { return step_ns(step) <= t_ns; });
  return static_cast<std::size_t>(it - steps.begin());
}

bool earlier(const DueEvent& a, const DueEvent& b) {
  if (a.at_ns != b.at_ns) return a.at_ns < b.at_ns;
  if (a.device != b.device) return a.device < b.device;
  if (a.step != b.step) return a.step < b.step;
  return a.rank < b.rank;
}

}  // namespace

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
  const auto add = [&](SimDevice& device, const CallContext& context) {
    if (!is_live_event_set(set.handle)) return nvml::kErrorInvalidArgument;
    // Some requested type unsupported: none is registered, the set stays usable (nvml.h).
    if ((types & ~supported_event_types(device.model.config().spec)) != 0) {
      return nvml::kErrorNotSupported;
    }
    auto& registrations = set.handle->registrations;
    unsigned long long registered = 0;
    for (const auto& r : registrations) {
      if (r.device == device.handle.index && r.generation == generation_) registered |= r.mask;
    }
    // Types already registered keep counting from their first registration.
    if (const unsigned long long added = types & ~registered; added != 0) {
      registrations.push_back({device.handle.index, generation_, added, context.scenario_ns - 1});
    }
    return nvml::kSuccess;
  };
  return device_call(Entry::DeviceRegisterEvents, handle, add);
}

void Driver::queue_due_events(nvmlEventSet_st& set, std::int64_t now_ns) {
  std::vector<DueEvent> due;
  for (auto& registration : set.registrations) {
    if (registration.generation != generation_ || registration.device >= devices_.size()) continue;
    SimDevice& device = *devices_[registration.device];
    const std::vector<HealthStep>& steps = device.model.config().faults.health;
    for (std::size_t s = first_after(steps, registration.through_ns); s < steps.size(); ++s) {
      const std::int64_t at_ns = step_ns(steps[s]);
      if (at_ns > now_ns || at_ns >= device.lost_at_ns) break;
      const StepEvents events = events_of(steps[s]);
      for (std::size_t e = 0; e < events.count; ++e) {
        if ((events.events[e].type & registration.mask) == 0) continue;
        const nvmlEventData_t data{&device.handle, events.events[e].type, events.events[e].data,
                                   nvml::kEventNoInstanceId, nvml::kEventNoInstanceId};
        due.push_back({at_ns, registration.device, s, e, data});
      }
    }
    registration.through_ns = std::max(registration.through_ns, now_ns);
  }
  // Everything queued before was due by an earlier look, so appending keeps the queue in order.
  std::sort(due.begin(), due.end(), earlier);
  for (const DueEvent& event : due) set.queue.push_back(event.data);
}

std::int64_t Driver::next_due_ns(const nvmlEventSet_st& set, std::int64_t now_ns) const {
  std::int64_t next = INT64_MAX;
  for (const auto& registration : set.registrations) {
    if (registration.generation != generation_ || registration.device >= devices_.size()) continue;
    const SimDevice& device = *devices_[registration.device];
    if (device.lost_at_ns > now_ns) next = std::min(next, device.lost_at_ns);
    const std::vector<HealthStep>& steps = device.model.config().faults.health;
    for (std::size_t s = first_after(steps, std::max(registration.through_ns, now_ns));
         s < steps.size(); ++s) {
      const std::int64_t at_ns = step_ns(steps[s]);
      const StepEvents events = events_of(steps[s]);
      const bool wanted =
          std::any_of(events.events, events.events + events.count,
                      [&](const HealthEvent& e) { return e.type & registration.mask; });
      if (wanted) {
        next = std::min(next, at_ns);
        break;
      }
    }
  }
  return next;
}

nvmlReturn_t Driver::take_event(nvmlEventSet_st& set, const CallContext& context,
                                nvmlEventData_t& out, std::int64_t* next_due) {
  queue_due_events(set, context.scenario_ns);
  // Events raised before a GPU fell off the bus are still delivered, then the loss is reported.
  if (!set.queue.empty()) {
    out = set.queue.front();
    set.queue.pop_front();
    return nvml::kSuccess;
  }
  for (const auto& registration : set.registrations) {
    if (registration.generation != generation_ || registration.device >= devices_.size()) continue;
    if (context.scenario_ns >= devices_[registration.device]->lost_at_ns) {
      return fail_call(nvml::kErrorGpuIsLost, Entry::EventSetWait, "the GPU has fallen off the bus",
                       registration.device);
    }
  }
  *next_due = next_due_ns(set, context.scenario_ns);
  return nvml::kErrorTimeout;
}

nvmlReturn_t Driver::event_set_wait(nvmlEventSet_t set, nvmlEventData_t* data,
                                    unsigned int timeout_ms) {
  using Steady = std::chrono::steady_clock;
  const Steady::time_point deadline = Steady::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    std::int64_t now_ns = 0;
    std::int64_t due_ns = INT64_MAX;
    double scale = 1.0;
    const nvmlReturn_t result = system_call(Entry::EventSetWait, [&](const Scenario&) {
      if (data == nullptr || !is_live_event_set(set.handle)) return nvml::kErrorInvalidArgument;
      CallContext context;
      context.realtime_ns = clock_.realtime_ns();
      context.scenario_ns = to_scenario_ns(context.realtime_ns);
      now_ns = context.scenario_ns;
      scale = time_scale_;
      return take_event(*set.handle, context, *data, &due_ns);
    });
    if (result != nvml::kErrorTimeout || timeout_ms == 0) return result;
    const Steady::time_point now = Steady::now();
    if (now >= deadline) return result;
    // Sleep (outside the lock) until the next event falls due or the timeout ends, then look again.
    Steady::duration sleep = deadline - now;
    if (due_ns != INT64_MAX) {
      const double wall_ns = std::ceil(static_cast<double>(due_ns - now_ns) / scale);
      const auto until_due =
          std::chrono::nanoseconds(std::max(kMinSleepNs, static_cast<std::int64_t>(wall_ns)));
      sleep = std::min<Steady::duration>(sleep, until_due);
    }
    std::this_thread::sleep_for(sleep);
  }
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
