// The two clocks every launcher timestamp carries: monotonic for intervals and deadlines,
// wall clock for people.
#pragma once

#include <cstdint>
#include <ctime>

namespace gpuscope::launch {

inline std::int64_t clock_now_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// CLOCK_MONOTONIC in nanoseconds.
inline std::int64_t mono_now_ns() {
  return clock_now_ns(CLOCK_MONOTONIC);
}
// CLOCK_REALTIME in nanoseconds.
inline std::int64_t wall_now_ns() {
  return clock_now_ns(CLOCK_REALTIME);
}

}  // namespace gpuscope::launch
