// Times (ms since the epoch) in the machine's local zone (TZ): as text in a strftime format, and
// the local midnights around them, daylight-saving changes included.
#pragma once

#include <cstdint>
#include <string>

namespace gpuscope::util {

// local_text(t, "%Y-%m-%d %H:%M") → "2026-11-25 14:30" in TZ. Seconds are truncated.
std::string local_text(std::int64_t ms, const char* strftime_format);

// The local midnight that starts the day `ms` falls in, and the one that ends it (the next
// day's), or `ms` itself when it is a midnight and `unless_exact`.
std::int64_t local_midnight_before(std::int64_t ms);
std::int64_t local_midnight_after(std::int64_t ms, bool unless_exact);

}  // namespace gpuscope::util
