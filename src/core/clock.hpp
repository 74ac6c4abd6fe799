// The two clocks every timestamp carries: monotonic (for intervals; never jumps) and wall clock
// (for people and for aligning nodes, which NTP keeps in step).
#pragma once

#include <cstdint>
#include <ctime>

namespace gpuscope {

inline std::int64_t clock_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline std::int64_t mono_now_ns() {
  return clock_ns(CLOCK_MONOTONIC);
}
inline std::int64_t wall_now_ns() {
  return clock_ns(CLOCK_REALTIME);
}

// Nanoseconds as (fractional) seconds.
inline double seconds(std::int64_t ns) {
  return static_cast<double>(ns) / 1e9;
}

}  // namespace gpuscope
