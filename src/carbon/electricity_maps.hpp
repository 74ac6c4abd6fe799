// Electricity Maps (api.electricitymap.org, v3): hourly carbon intensity of a zone ("DE",
// "FR", "US-CAL-CISO", ...) with a token. The token comes from the environment
// (ELECTRICITYMAPS_TOKEN) or a file (--carbon-token-file), never from the command line, and is
// never printed or stored.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "carbon/fetch.hpp"
#include "core/grid_intensity.hpp"

namespace gpuscope::carbon {

inline constexpr std::string_view kElectricityMapsUrl = "https://api.electricitymap.org";

// The token: the first line of `file` when given, else ELECTRICITYMAPS_TOKEN (`env_value`).
// Throws Error::usage when neither gives one, or the file cannot be read, saying how to give it.
std::string electricity_maps_token(const std::optional<std::filesystem::path>& file,
                                   const std::string& env_value);

// The zone's intensity over [start, end) (wall clock ns), widened to whole hours, from
// `/v3/carbon-intensity/past-range`. Throws Error (exit 1) naming the zone and what the API
// answered: a refused token (401/403), an unknown zone, an HTTP error after the retries, an
// answer of another shape.
IntensitySeries fetch_electricity_maps(const std::string& zone, const std::string& token,
                                       std::int64_t start_wall_ns, std::int64_t end_wall_ns,
                                       const FetchOptions& options);

// The answer's JSON as a series (`history` or `data`, items of carbonIntensity and datetime,
// each an hour from its datetime; estimated figures say so). Throws Error naming what is wrong.
IntensitySeries parse_electricity_maps_answer(std::string_view body, std::string_view zone);

}  // namespace gpuscope::carbon
