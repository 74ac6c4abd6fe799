// libFuzzer target: a time zone's rules as util/time_zone reads them, from a TZif file (the first
// byte even) or a POSIX TZ rule (odd), then offsets and local readings probed at instants taken
// from the input: no crash, no overflow, and every instant's local time leads back to it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "util/time_zone.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto zone = data[0] % 2 == 0 ? gpuscope::util::TimeZone::from_tzif(text)
                                     : gpuscope::util::TimeZone::from_posix(text);
  if (!zone) return 0;
  // Instants from 1900 to 2300, some of them at the input's own numbers.
  std::int64_t t = -2'208'988'800;
  for (std::size_t i = 0; i < 64; ++i) {
    const std::uint8_t b = i < size ? data[i] : static_cast<std::uint8_t>(i * 37);
    t += 86'400 * 23 * (1 + b) + b * 61;
    if (t > 10'413'792'000) t -= 12'622'780'800;
    const std::int64_t offset = zone->offset_at(t);
    const auto back = zone->utc_of_local(t + offset);
    bool found = false;
    for (const auto u : back) found = found || u == t;
    if (!found) std::abort();
  }
  return 0;
}
