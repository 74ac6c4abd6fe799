// The UK National Grid ESO (NESO) Carbon Intensity API (api.carbonintensity.org.uk): no key,
// half-hour periods, Great Britain as a whole or one of 17 regions (by id, by name as
// iris-gpubench spells them, or by outward postcode). The national series has measured
// ("actual") figures after the fact; the regional one only forecasts, and says so.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "carbon/fetch.hpp"
#include "core/grid_intensity.hpp"

namespace gpuscope::carbon {

inline constexpr std::string_view kUkApiUrl = "https://api.carbonintensity.org.uk";

struct UkRegion {
  int id;
  std::string_view name;
};

// The API's 17 regions (regionid 1..17).
std::span<const UkRegion> uk_regions();

// What --carbon-region means for the UK source: "" or "GB"/"national" (Great Britain), a region id
// ("12"), a region's name, case-insensitive ("South England"), or an outward postcode ("RG10").
struct UkArea {
  std::optional<int> region_id;
  std::optional<std::string> postcode;
  std::string name;  // for people: "Great Britain", "South England", "postcode RG10"
};
// Throws Error::usage for anything else, listing the regions.
UkArea parse_uk_area(std::string_view text);

// The intensity over [start, end) (wall clock ns) for `area`, widened to whole half hours, from
// options.base_url (empty: kUkApiUrl).
// Throws Error (exit 1) naming the host and what it answered when it cannot: no network, an
// HTTP error after the retries, an answer that is not the API's shape, an unknown region.
IntensitySeries fetch_uk(const UkArea& area, std::int64_t start_wall_ns, std::int64_t end_wall_ns,
                         const FetchOptions& options);

// The answer of one GET (the API's JSON) as a series; `regional` says which shape. Exposed for
// the tests of malformed answers. Throws Error naming what is wrong.
IntensitySeries parse_uk_answer(std::string_view body, bool regional, std::string_view url);

}  // namespace gpuscope::carbon
