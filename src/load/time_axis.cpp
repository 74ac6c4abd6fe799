#include "load/time_axis.hpp"

#include <fmt/format.h>

namespace gpuscope::load {
namespace {

double seconds_since(std::int64_t wall_ns, std::int64_t t0) {
  return static_cast<double>(static_cast<WideInt>(wall_ns) - t0) / 1e9;
}

}  // namespace

TimeCheck place_samples(const RunClock& clock, std::span<const std::int64_t> wall,
                        std::span<const std::int64_t> mono, std::int64_t t0,
                        std::vector<double>& t) {
  TimeCheck check;
  const std::size_t n = std::min(wall.size(), mono.size());
  check.rows = n;
  t.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    t[i] = clock.at(mono[i]);
    if (std::isnan(t[i])) {
      ++check.outside;
      continue;
    }
    const double into = t[i] - clock.offset_s;
    const double step = clock.step_s(wall[i], mono[i]);
    if (std::fabs(step) > 1.0 + 1e-3 * std::fabs(into)) {
      ++check.stepped;
      if (std::fabs(step) > std::fabs(check.largest_step_s)) check.largest_step_s = step;
      if (std::isnan(check.first_step_at_s)) check.first_step_at_s = into;
    }
  }
  if (n > 0 && check.outside == n) {
    // No sample fits the run's own start and end: those are what is wrong, not every sample.
    check.by_wall = true;
    check.outside = 0;
    for (std::size_t i = 0; i < n; ++i) t[i] = seconds_since(wall[i], t0);
  }
  return check;
}

std::string duration_text(double seconds) {
  const double a = std::fabs(seconds);
  const char* sign = seconds < 0 ? "-" : "+";
  if (a >= 2 * 86400.0) return fmt::format("{}{:.1f} days", sign, a / 86400);
  if (a >= 2 * 3600.0) return fmt::format("{}{:.1f} h", sign, a / 3600);
  return fmt::format("{}{:.1f} s", sign, a);
}

}  // namespace gpuscope::load
