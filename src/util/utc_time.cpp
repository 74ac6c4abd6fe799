#include "util/utc_time.hpp"

#include <cmath>
#include <ctime>

#include "util/number_text.hpp"

namespace gpuscope::util {
namespace {

// 4e9 Unix seconds (2096): far from where ns since 1970 overflow.
constexpr std::int64_t kMaxUnixSeconds = 4'000'000'000;

std::optional<int> digits(std::string_view text, std::size_t at, std::size_t count) {
  if (at + count > text.size()) return std::nullopt;
  int value = 0;
  for (std::size_t i = at; i < at + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

}  // namespace

std::string tm_text(const std::tm& tm, const char* strftime_format) {
  char buffer[64];
  // The formats are the callers' literals; the header says it is a strftime format.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  const std::size_t n = std::strftime(buffer, sizeof(buffer), strftime_format, &tm);
#pragma GCC diagnostic pop
  return std::string(buffer, n);
}

std::string utc_text(std::int64_t wall_ns, const char* strftime_format) {
  std::int64_t seconds = wall_ns / 1'000'000'000;
  if (wall_ns < 0 && wall_ns % 1'000'000'000 != 0) --seconds;  // floor, not towards zero
  const auto t = static_cast<std::time_t>(seconds);
  std::tm utc{};
  gmtime_r(&t, &utc);
  return tm_text(utc, strftime_format);
}

std::optional<std::int64_t> parse_utc_time(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (text.find_first_not_of("0123456789.") == std::string_view::npos) {
    const auto seconds = util::parse_finite_number(text);
    if (!seconds || *seconds < 0 || *seconds > static_cast<double>(kMaxUnixSeconds)) {
      return std::nullopt;
    }
    return static_cast<std::int64_t>(std::llround(*seconds * 1e9));
  }
  // YYYY-MM-DDThh:mm[:ss[.fff]] then Z or ±hh:mm.
  const auto year = digits(text, 0, 4), month = digits(text, 5, 2), day = digits(text, 8, 2);
  const auto hour = digits(text, 11, 2), minute = digits(text, 14, 2);
  if (!year || !month || !day || !hour || !minute || text[4] != '-' || text[7] != '-' ||
      (text[10] != 'T' && text[10] != ' ') || text[13] != ':') {
    return std::nullopt;
  }
  std::size_t at = 16;
  int second = 0;
  std::int64_t fraction_ns = 0;
  if (at < text.size() && text[at] == ':') {
    const auto s = digits(text, at + 1, 2);
    if (!s) return std::nullopt;
    second = *s;
    at += 3;
    if (at < text.size() && text[at] == '.') {
      std::int64_t scale = 100'000'000;
      ++at;
      while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
        fraction_ns += (text[at] - '0') * scale;
        scale /= 10;
        ++at;
      }
    }
  }
  if (at >= text.size()) return std::nullopt;  // no zone: local time would be a guess
  std::int64_t offset_s = 0;
  if (text[at] == 'Z' && at + 1 == text.size()) {
    offset_s = 0;
  } else if ((text[at] == '+' || text[at] == '-') && at + 6 == text.size() && text[at + 3] == ':') {
    const auto oh = digits(text, at + 1, 2), om = digits(text, at + 4, 2);
    if (!oh || !om) return std::nullopt;
    offset_s = (*oh * 3600 + *om * 60) * (text[at] == '+' ? 1 : -1);
  } else {
    return std::nullopt;
  }
  if (*month < 1 || *month > 12 || *day < 1 || *day > 31 || *hour > 23 || *minute > 59 ||
      second > 60) {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = *year - 1900;
  tm.tm_mon = *month - 1;
  tm.tm_mday = *day;
  tm.tm_hour = *hour;
  tm.tm_min = *minute;
  tm.tm_sec = second;
  const std::time_t utc = timegm(&tm);
  if (utc == static_cast<std::time_t>(-1) || tm.tm_mday != *day) return std::nullopt;
  const std::int64_t unix_s = static_cast<std::int64_t>(utc) - offset_s;
  if (unix_s < 0 || unix_s > kMaxUnixSeconds) return std::nullopt;
  return unix_s * 1'000'000'000 + fraction_ns;
}

}  // namespace gpuscope::util
