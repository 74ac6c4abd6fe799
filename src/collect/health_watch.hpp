// The GPUs' health as the sampler watches it: the driver's fault events (Xids, ECC,
// row remapping), polled without waiting, and the health counters read at the slow cadence,
// with an event for each change that matters (docs/health.md).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collect/health_reader.hpp"
#include "core/run.hpp"
#include "nvml/events.hpp"

namespace gpuscope::collect {

// The event types gpuscope registers: the faults. Never Clock or PState: a power-capped GPU
// raises clock events about ten times a second (docs/validation.md).
inline constexpr std::uint64_t kFaultEventTypes =
    nvml::kEventTypeDoubleBitEccError | nvml::kEventTypeXidCriticalError |
    nvml::kEventTypeSingleBitEccErrorStorm | nvml::kEventTypeDramRetirementEvent |
    nvml::kEventTypeDramRetirementFailure | nvml::kEventTypeNonFatalPoisonError |
    nvml::kEventTypeFatalPoisonError | nvml::kEventTypeGpuUnavailableError |
    nvml::kEventTypeGpuRecoveryAction;

class HealthWatch {
 public:
  // Probes every GPU's health calls and registers them for the fault events. `notes` receives
  // a line for what cannot be watched (no event support, no health counters).
  HealthWatch(std::vector<HealthReader> readers, std::vector<std::string>& notes);

  // The driver's events queued since the last poll; never waits (a wait with timeout 0 costs
  // about 4 µs on an H200).
  std::vector<Event> poll_events();
  // Reads every GPU's counters: a row per GPU, and the events for what changed since the
  // previous read (or, on the first, what was already wrong).
  void read(std::vector<HealthRow>& rows, std::vector<Event>& events);
  std::size_t size() const { return readers_.size(); }

 private:
  void register_events(std::vector<std::string>& notes);

  std::vector<HealthReader> readers_;
  std::optional<nvml::EventSet> events_;
  std::vector<std::optional<HealthRow>> last_;
};

// Words for one driver event on GPU `index`: its kind and detail ("Xid 48: ...").
Event describe_driver_event(const nvml::Event& event, unsigned index);
// The events for the changes between two reads of one GPU; `before` null: the first read.
std::vector<Event> health_changes(const HealthRow* before, const HealthRow& now);

}  // namespace gpuscope::collect
