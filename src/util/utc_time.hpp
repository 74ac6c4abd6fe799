// A wall-clock time (ns since the epoch) as UTC text, in a strftime format.
#pragma once

#include <cstdint>
#include <string>

namespace gpuscope::util {

// utc_text(t, "%Y-%m-%dT%H:%MZ") → "2026-11-25T13:30Z". Seconds are truncated.
std::string utc_text(std::int64_t wall_ns, const char* strftime_format);

}  // namespace gpuscope::util
