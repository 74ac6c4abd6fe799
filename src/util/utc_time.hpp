// Wall-clock times (ns since the epoch) as UTC text, in a strftime format, and back from text.
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>

namespace gpuscope::util {

// A broken-down time (gmtime_r's or localtime_r's) in a strftime format.
std::string tm_text(const std::tm& tm, const char* strftime_format);

// utc_text(t, "%Y-%m-%dT%H:%MZ") → "2026-11-25T13:30Z". Seconds are truncated.
std::string utc_text(std::int64_t wall_ns, const char* strftime_format);

// "2026-11-25T13:30Z", "2026-11-25T13:30:00.5+01:00", "1764077400": ns since the epoch (UTC),
// nullopt when it is none of these, has no zone (a local time would be a guess), or is not
// between 1970 and 2096 (Unix seconds 0 to 4e9).
std::optional<std::int64_t> parse_utc_time(std::string_view text);

}  // namespace gpuscope::util
