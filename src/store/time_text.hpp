// Wall-clock nanoseconds as ISO-8601 text, for the human-readable columns next to the *_ns ones.
#pragma once

#include <cstdint>
#include <string>

namespace gpuscope::store {

// "2024-05-01T12:34:56.789012345Z" (UTC, nanosecond precision) for CLOCK_REALTIME `wall_ns`.
std::string iso8601(std::int64_t wall_ns);

// iso8601() of the current time.
std::string iso8601_now();

}  // namespace gpuscope::store
