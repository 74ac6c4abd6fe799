// Time sources, behind an interface so tests can drive the simulated timeline by hand.
#pragma once

#include <cstdint>

namespace gpuscope::sim {

class Clock {
 public:
  virtual ~Clock() = default;
  // CLOCK_REALTIME in ns: shared by processes, so they can agree on one scenario timeline.
  virtual std::int64_t realtime_ns() const = 0;
  // CLOCK_MONOTONIC in ns: for throttling work, never for scenario time.
  virtual std::int64_t monotonic_ns() const = 0;
};

// The process's clocks (clock_gettime through the vDSO: tens of nanoseconds).
const Clock& system_clock();

}  // namespace gpuscope::sim
