// A GPU's health counters and events at a scenario time, from its "health" fault steps
// (docs/scenarios.md, "Health faults"). Pure functions of the steps: no driver state.
#pragma once

#include <cstdint>
#include <vector>

#include "nvml/abi.hpp"
#include "sim/scenario.hpp"

namespace gpuscope::sim {

// The sums of the steps at or before a time.
using HealthCounters = HealthCounts;

// A step's time in scenario nanoseconds, rounded as lost_at_s is.
std::int64_t step_ns(const HealthStep& step);

HealthCounters health_at(const std::vector<HealthStep>& steps, std::int64_t scenario_ns);

// One event a step raises.
struct HealthEvent {
  unsigned long long type = 0;  // an nvmlEventType* bit
  unsigned long long data = 0;  // the Xid for XidCriticalError, else 0
};

// The events of one step, in this order: Xid, SingleBitEccError, DoubleBitEccError,
// DramRetirementEvent (rows remapped or pages retired, or either marked pending),
// DramRetirementFailure. At most five.
struct StepEvents {
  HealthEvent events[5];
  std::size_t count = 0;
};
StepEvents events_of(const HealthStep& step);

}  // namespace gpuscope::sim
