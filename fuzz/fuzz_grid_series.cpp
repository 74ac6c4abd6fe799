// libFuzzer target: a user's grid carbon intensity series (--carbon-series FILE,
// carbon/series_file), CSV or JSON from wherever the site got it. Bad input is a usage error
// (gpuscope::Error, exit code 2) and nothing else; what is read is a series the analysis can
// join with energy as it is: at least one period, in order, none overlapping another, each with
// an end after its start, an intensity of 0-5000 gCO2e/kWh, and the kind of a user's figures.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "carbon/series_file.hpp"
#include "core/error.hpp"
#include "fuzz_file.hpp"

using gpuscope::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscope;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const IntensitySeries series = carbon::parse_series(text, "fuzz.csv");
    require(!series.periods.empty());
    for (std::size_t i = 0; i < series.periods.size(); ++i) {
      const IntensityPeriod& p = series.periods[i];
      require(p.end_wall_ns > p.start_wall_ns);
      require(p.g_per_kwh >= 0 && p.g_per_kwh <= 5000);
      require(p.kind == IntensityKind::Given);
      if (i > 0) require(p.start_wall_ns >= series.periods[i - 1].end_wall_ns);
    }
  } catch (const Error& e) {
    require(e.exit_code() == 2);  // the user's file: a usage error, never a failure of gpuscope
  }
  return 0;
}
