// A GPU's health counters and events at a scenario time, from its "health" fault steps
// (docs/scenarios.md, "Health faults"). Pure functions of the steps: no driver state.
#pragma once

#include <cstdint>
#include <vector>

#include "nvml/abi.hpp"
#include "sim/scenario.hpp"

namespace gpuscope::sim {

// The sums of the steps at or before a time; the flags stay set once a step set them.
struct HealthCounters {
  std::uint64_t ecc_corrected = 0;  // volatile: since the driver loaded (scenario time zero)
  std::uint64_t ecc_uncorrected = 0;
  std::uint32_t remapped_correctable = 0;
  std::uint32_t remapped_uncorrectable = 0;
  bool remap_pending = false;
  bool remap_failure = false;
  std::uint32_t pcie_replays = 0;
  std::uint32_t retired_sbe = 0;
  std::uint32_t retired_dbe = 0;
  bool retired_pending = false;
  std::uint64_t nvlink_replay_errors = 0;
  std::uint64_t nvlink_recovery_errors = 0;
  std::uint64_t nvlink_crc_flit_errors = 0;
  std::uint64_t nvlink_crc_data_errors = 0;
};

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
