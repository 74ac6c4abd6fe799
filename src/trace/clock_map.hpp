// Puts CUPTI timestamps on gpuscope's clocks (docs/kernels.md, "Clocks"). The injection library
// asks CUPTI to take every timestamp from CLOCK_MONOTONIC, the clock of the samples' mono_ns;
// then a timestamp is mono_ns as it is. Where CUPTI refused (its default on Linux is
// CLOCK_REALTIME), timestamps are converted through the calibration points the library records
// at start, with every buffer and at exit: linear interpolation between the two points around a
// timestamp, the nearest point's offset outside them. Wall-clock times are mono_ns plus the
// wall − mono offset of the calibration points, interpolated the same way.
#pragma once

#include <cstdint>
#include <vector>

#include "trace/sidecar_format.hpp"

namespace gpuscope::trace {

class ClockMap {
 public:
  // `points` in any order. `fallback_wall_minus_mono_ns` (the run's start_wall_ns −
  // start_mono_ns) is used when there is no point at all.
  ClockMap(std::vector<CalibrationRecord> points, TimestampSource source,
           std::int64_t fallback_wall_minus_mono_ns);

  std::int64_t to_mono(std::uint64_t cupti_ns) const;
  std::int64_t to_wall(std::uint64_t cupti_ns) const;

  // "monotonic" or "calibrated", as trace_processes.clock says.
  const char* clock_name() const;
  // Whether a CUPTI-clock conversion had no calibration point and fell back on the run's
  // wall − mono offset (CUPTI's clock taken as CLOCK_REALTIME).
  bool uncalibrated() const { return source_ != TimestampSource::Monotonic && points_.empty(); }

 private:
  // Linear interpolation of `value(point)` at `cupti_ns` over the points (nearest outside).
  template <typename Value>
  std::int64_t interpolate(std::uint64_t cupti_ns, Value value) const;

  std::vector<CalibrationRecord> points_;  // by cupti_ns, duplicates removed
  TimestampSource source_;
  std::int64_t fallback_ns_;
};

}  // namespace gpuscope::trace
