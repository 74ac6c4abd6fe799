#include "store/time_text.hpp"

#include <fmt/format.h>

#include <chrono>
#include <ctime>

namespace gpuscope::store {

std::string iso8601(std::int64_t wall_ns) {
  constexpr std::int64_t kNsPerS = 1'000'000'000;
  // Floor division so times before 1970 still print a non-negative fraction.
  std::int64_t seconds = wall_ns / kNsPerS;
  std::int64_t fraction = wall_ns % kNsPerS;
  if (fraction < 0) {
    fraction += kNsPerS;
    --seconds;
  }
  const auto t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:09}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, fraction);
}

std::string iso8601_now() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return iso8601(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count());
}

}  // namespace gpuscope::store
