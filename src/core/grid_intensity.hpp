// The carbon intensity of the grid over time, as a source gave it: periods of constant
// gCO2e/kWh, each saying whether it was measured, estimated or forecast. Plain data between
// carbon/ (which reads or fetches it) and analyze/ (which joins it with the energy of each
// interval).
#pragma once

#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/stored_word.hpp"

namespace gpuscope {

// Where a period's figure comes from, spelled once: an enum for code to compare, the word stored
// in grid_intensity.kind (docs/database.md) and shown in reports beside each (docs/analysis.md
// §8). A word this gpuscope does not know (a newer one stored it) reads as Other and keeps its
// word, so it is still shown as it was stored.
struct IntensityKindWords {
  enum Value {
    Actual,     // measured, after the fact (the UK API's "actual", Electricity Maps' measured)
    Estimated,  // a model's estimate of the past where measurements are missing (Electricity
                // Maps' isEstimated): not measured, not a forecast either
    Forecast,   // predicted before the fact (the UK API's "forecast")
    Given,      // a user's own figures (--carbon-series)
    Other,      // a word this gpuscope does not know, or none ("")
  };

  static constexpr std::array<std::pair<Value, std::string_view>, 4> kWords = {{
      {Actual, "actual"},
      {Estimated, "estimated"},
      {Forecast, "forecast"},
      {Given, "given"},
  }};
};
using IntensityKind = StoredWord<IntensityKindWords>;

struct IntensityPeriod {
  std::int64_t start_wall_ns = 0;  // CLOCK_REALTIME (UTC), [start, end)
  std::int64_t end_wall_ns = 0;
  double g_per_kwh = 0;
  IntensityKind kind;
};

struct IntensitySeries {
  std::string source;  // "file grid.csv", "UK Carbon Intensity API", ...
  std::string region;  // the region or zone the figures are for ("" when not said)
  std::vector<IntensityPeriod> periods;  // by start, not overlapping
};

}  // namespace gpuscope
