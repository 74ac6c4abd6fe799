#include "trace/clock_map.hpp"

#include <algorithm>
#include <cmath>

namespace gpuscope::trace {

ClockMap::ClockMap(std::vector<CalibrationRecord> points, TimestampSource source,
                   std::int64_t fallback_wall_minus_mono_ns)
    : points_(std::move(points)), source_(source), fallback_ns_(fallback_wall_minus_mono_ns) {
  std::stable_sort(points_.begin(), points_.end(),
                   [](const CalibrationRecord& a, const CalibrationRecord& b) {
                     return a.cupti_ns < b.cupti_ns;
                   });
  // Two points at one CUPTI time would divide by zero; keep the first.
  points_.erase(std::unique(points_.begin(), points_.end(),
                            [](const CalibrationRecord& a, const CalibrationRecord& b) {
                              return a.cupti_ns == b.cupti_ns;
                            }),
                points_.end());
}

template <typename Value>
std::int64_t ClockMap::interpolate(std::uint64_t cupti_ns, Value value) const {
  const auto after =
      std::upper_bound(points_.begin(), points_.end(), cupti_ns,
                       [](std::uint64_t t, const CalibrationRecord& p) { return t < p.cupti_ns; });
  if (after == points_.begin()) return value(points_.front());
  if (after == points_.end()) return value(points_.back());
  const CalibrationRecord& a = *(after - 1);
  const CalibrationRecord& b = *after;
  const double f =
      static_cast<double>(cupti_ns - a.cupti_ns) / static_cast<double>(b.cupti_ns - a.cupti_ns);
  // Offsets between CLOCK_REALTIME and CLOCK_MONOTONIC are ~1.7e18 ns, where a double's step
  // is 256 ns: interpolate the difference between the two points, which is small, exactly.
  const std::int64_t va = value(a);
  const std::int64_t vb = value(b);
  return va + static_cast<std::int64_t>(std::llround(f * static_cast<double>(vb - va)));
}

std::int64_t ClockMap::to_mono(std::uint64_t cupti_ns) const {
  const auto t = static_cast<std::int64_t>(cupti_ns);
  if (source_ == TimestampSource::Monotonic) return t;
  // CUPTI's default clock on Linux is CLOCK_REALTIME: without any point, the run's offset.
  if (points_.empty()) return t - fallback_ns_;
  return t + interpolate(cupti_ns, [](const CalibrationRecord& p) {
           return p.mono_ns - static_cast<std::int64_t>(p.cupti_ns);
         });
}

std::int64_t ClockMap::to_wall(std::uint64_t cupti_ns) const {
  const std::int64_t mono = to_mono(cupti_ns);
  if (points_.empty()) return mono + fallback_ns_;
  return mono +
         interpolate(cupti_ns, [](const CalibrationRecord& p) { return p.wall_ns - p.mono_ns; });
}

const char* ClockMap::clock_name() const {
  return source_ == TimestampSource::Monotonic ? "monotonic" : "calibrated";
}

}  // namespace gpuscope::trace
