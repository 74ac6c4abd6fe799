// A user's own grid carbon intensity series (`--carbon-series FILE`), for sites whose provider
// or facility publishes its own figures: CSV or JSON, periods or point readings
// (docs/analysis.md, "Carbon from the grid as it was").
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

#include "core/grid_intensity.hpp"

namespace gpuscope::carbon {

// Reads `path`: JSON when it starts with '[' or '{' (an array of objects, or {"data": [...]}),
// else CSV with a header row. Each record has a start (`start`, `from`, `timestamp` or
// `datetime`), optionally an end (`end`, `to`), and an intensity in gCO2e/kWh (`g_per_kwh`,
// `intensity`, `carbon_intensity`, `carbonIntensity`). Times are ISO 8601 with a zone (`Z` or
// ±hh:mm) or Unix seconds. A record without an end holds until the next one starts; the last
// one for as long as the one before it (or an hour when it is alone). Throws Error::usage naming
// the file and the line or record for anything else: a missing column, a time without a zone,
// an intensity that is negative, not finite or above 5000, periods that overlap, no records.
IntensitySeries read_series_file(const std::filesystem::path& path);

// The same from text (`name` is used in messages and as the source).
IntensitySeries parse_series(std::string_view text, std::string_view name);

}  // namespace gpuscope::carbon
