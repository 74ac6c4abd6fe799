// libFuzzer target: what a grid API answers, which gpuscope does not control (a proxy, a mirror
// given with --carbon-url, an API that changed): the UK Carbon Intensity API's national and
// regional JSON (carbon/uk_grid) and Electricity Maps' past-range JSON (carbon/electricity_maps).
// The first byte picks the parser. A bad answer is a gpuscope::Error, never another exception or
// a crash; what is read is a series the analysis can use as it is: periods in order, none
// overlapping another, each with an end after its start, an intensity of 0-5000 gCO2e/kWh and a
// kind the API has (the UK: actual or forecast; Electricity Maps: an hour, actual or estimated).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "carbon/electricity_maps.hpp"
#include "carbon/uk_grid.hpp"
#include "core/error.hpp"
#include "fuzz_file.hpp"

using gpuscope::fuzz::require;

namespace {

using namespace gpuscope;

void check(const IntensitySeries& series, bool uk) {
  constexpr std::int64_t kHourNs = 3600LL * 1'000'000'000;
  for (std::size_t i = 0; i < series.periods.size(); ++i) {
    const IntensityPeriod& p = series.periods[i];
    require(p.end_wall_ns > p.start_wall_ns);
    require(p.g_per_kwh >= 0 && p.g_per_kwh <= 5000);
    if (uk) {
      require(p.kind == IntensityKind::Actual || p.kind == IntensityKind::Forecast);
    } else {
      require(p.kind == IntensityKind::Actual || p.kind == IntensityKind::Estimated);
      require(p.end_wall_ns - p.start_wall_ns == kHourNs);
    }
    if (i > 0) require(p.start_wall_ns >= series.periods[i - 1].end_wall_ns);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 3) {
      case 0:
        check(carbon::parse_uk_answer(body, false, "https://api.example/intensity"), true);
        break;
      case 1:
        check(carbon::parse_uk_answer(body, true, "https://api.example/regional/intensity"), true);
        break;
      default:
        check(carbon::parse_electricity_maps_answer(body, "DE"), false);
        break;
    }
  } catch (const Error&) {
  }
  return 0;
}
