#include "util/utc_time.hpp"

#include <ctime>

namespace gpuscope::util {

std::string utc_text(std::int64_t wall_ns, const char* strftime_format) {
  std::int64_t seconds = wall_ns / 1'000'000'000;
  if (wall_ns < 0 && wall_ns % 1'000'000'000 != 0) --seconds;  // floor, not towards zero
  const auto t = static_cast<std::time_t>(seconds);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char buffer[64];
  // The formats are the callers' literals; the header says it is a strftime format.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  const std::size_t n = std::strftime(buffer, sizeof(buffer), strftime_format, &utc);
#pragma GCC diagnostic pop
  return std::string(buffer, n);
}

}  // namespace gpuscope::util
