#include "util/local_time.hpp"

#include <ctime>

#include "util/utc_time.hpp"

namespace gpuscope::util {

namespace {

std::tm local_tm(std::int64_t ms) {
  std::int64_t seconds = ms / 1000;
  if (ms < 0 && ms % 1000 != 0) --seconds;  // floor, not towards zero
  const auto t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  localtime_r(&t, &tm);
  return tm;
}

std::int64_t midnight(std::tm tm, int add_days) {
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  tm.tm_isdst = -1;  // mktime finds whether daylight saving applies at that midnight
  tm.tm_mday += add_days;
  return static_cast<std::int64_t>(std::mktime(&tm)) * 1000;
}

}  // namespace

std::string local_text(std::int64_t ms, const char* strftime_format) {
  return tm_text(local_tm(ms), strftime_format);
}

std::int64_t local_midnight_before(std::int64_t ms) {
  return midnight(local_tm(ms), 0);
}

std::int64_t local_midnight_after(std::int64_t ms, bool unless_exact) {
  const std::int64_t start = local_midnight_before(ms);
  if (unless_exact && start == ms) return ms;
  return midnight(local_tm(ms), 1);
}

}  // namespace gpuscope::util
