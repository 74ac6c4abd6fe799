#include "store/time_text.hpp"

#include <fmt/format.h>

#include <chrono>

#include "util/utc_time.hpp"

namespace gpuscope::store {

std::string iso8601(std::int64_t wall_ns) {
  constexpr std::int64_t kNsPerS = 1'000'000'000;
  // Floor division so times before 1970 still print a non-negative fraction (utc_text floors
  // the seconds the same way).
  std::int64_t fraction = wall_ns % kNsPerS;
  if (fraction < 0) fraction += kNsPerS;
  return util::utc_text(wall_ns, "%Y-%m-%dT%H:%M:%S") + fmt::format(".{:09}Z", fraction);
}

std::string iso8601_now() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return iso8601(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count());
}

}  // namespace gpuscope::store
