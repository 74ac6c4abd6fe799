#include "sim/clock.hpp"

#include <ctime>

namespace gpuscope::sim {
namespace {

std::int64_t read_clock(clockid_t id) {
  timespec now{};
  clock_gettime(id, &now);
  return std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

class SystemClock final : public Clock {
 public:
  std::int64_t realtime_ns() const override { return read_clock(CLOCK_REALTIME); }
  std::int64_t monotonic_ns() const override { return read_clock(CLOCK_MONOTONIC); }
};

}  // namespace

const Clock& system_clock() {
  static const SystemClock clock;
  return clock;
}

}  // namespace gpuscope::sim
