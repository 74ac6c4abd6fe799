// The carbon intensity of the grid over time, as a source gave it: periods of constant
// gCO2e/kWh, each saying whether it was measured or forecast. Plain data between carbon/ (which
// reads or fetches it) and analyze/ (which joins it with the energy of each interval).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpuscope {

struct IntensityPeriod {
  std::int64_t start_wall_ns = 0;  // CLOCK_REALTIME (UTC), [start, end)
  std::int64_t end_wall_ns = 0;
  double g_per_kwh = 0;
  std::string kind;  // "actual", "forecast", or "given" (a user's own figures)
};

struct IntensitySeries {
  std::string source;  // "file grid.csv", "UK Carbon Intensity API", ...
  std::string region;  // the region or zone the figures are for ("" when not said)
  std::vector<IntensityPeriod> periods;  // by start, not overlapping
};

}  // namespace gpuscope
