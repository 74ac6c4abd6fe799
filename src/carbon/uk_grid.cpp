#include "carbon/uk_grid.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <ctime>
#include <nlohmann/json.hpp>

#include "carbon/fetch.hpp"
#include "carbon/series_file.hpp"
#include "core/error.hpp"
#include "util/utc_time.hpp"

namespace gpuscope::carbon {
namespace {

constexpr std::array<UkRegion, 17> kRegions = {{{1, "North Scotland"},
                                                {2, "South Scotland"},
                                                {3, "North West England"},
                                                {4, "North East England"},
                                                {5, "Yorkshire"},
                                                {6, "North Wales & Merseyside"},
                                                {7, "South Wales"},
                                                {8, "West Midlands"},
                                                {9, "East Midlands"},
                                                {10, "East England"},
                                                {11, "South West England"},
                                                {12, "South England"},
                                                {13, "London"},
                                                {14, "South East England"},
                                                {15, "England"},
                                                {16, "Scotland"},
                                                {17, "Wales"}}};

constexpr std::int64_t kHalfHourNs = 1800LL * 1'000'000'000;

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string regions_text() {
  std::string out;
  for (const auto& r : kRegions)
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", r.id, r.name);
  return out;
}

// "2026-11-25T13:30Z", as the API's URLs take it.
std::string api_time(std::int64_t wall_ns) {
  return util::utc_text(wall_ns, "%Y-%m-%dT%H:%MZ");
}

const nlohmann::json& field(const nlohmann::json& object, const char* name, std::string_view url,
                            std::string_view where) {
  if (!object.is_object() || !object.contains(name)) {
    throw Error(fmt::format("the answer of {} is not the Carbon Intensity API's", url),
                fmt::format("{} has no \"{}\"", where, name),
                "check --carbon-url, or use --carbon-series FILE");
  }
  return object.at(name);
}

}  // namespace

std::span<const UkRegion> uk_regions() {
  return kRegions;
}

UkArea parse_uk_area(std::string_view text) {
  const std::string key = lower(text);
  if (key.empty() || key == "gb" || key == "national" || key == "great britain") {
    return {std::nullopt, std::nullopt, "Great Britain"};
  }
  for (const auto& r : kRegions) {
    if (key == lower(r.name) || key == std::to_string(r.id)) {
      return {r.id, std::nullopt, std::string(r.name)};
    }
  }
  // An outward postcode: 2-4 characters, letters then a digit ("RG10", "N1", "EC1A").
  const bool postcode =
      key.size() >= 2 && key.size() <= 4 && std::isalpha(static_cast<unsigned char>(key[0])) &&
      std::any_of(key.begin(), key.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
      std::all_of(key.begin(), key.end(),
                  [](char c) { return std::isalnum(static_cast<unsigned char>(c)); });
  if (postcode) {
    std::string upper(text);
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return {std::nullopt, upper, "postcode " + upper};
  }
  throw Error::usage(fmt::format("unknown UK region '{}'", text), {},
                     fmt::format("give GB, a region id or name ({}), or an outward postcode such "
                                 "as RG10; --carbon-region list lists them",
                                 regions_text()));
}

IntensitySeries parse_uk_answer(std::string_view body, bool regional, std::string_view url) {
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(body);
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("the answer of {} is not JSON", url), e.what(),
                "try again later, or use --carbon-series FILE");
  }
  const nlohmann::json* list = &field(document, "data", url, "the answer");
  IntensitySeries series;
  series.source = "UK Carbon Intensity API";
  if (regional) {
    // The regional endpoints answer `data` as an object (one region) holding its own `data`.
    const nlohmann::json& region = list->is_array() && !list->empty() ? list->front() : *list;
    if (region.contains("shortname") && region["shortname"].is_string()) {
      series.region = region["shortname"].get<std::string>();
    }
    list = &field(region, "data", url, "the region");
  } else {
    series.region = "Great Britain";
  }
  if (!list->is_array()) {
    throw Error(fmt::format("the answer of {} is not the Carbon Intensity API's", url),
                "\"data\" is not a list of periods", "check --carbon-url");
  }
  for (const auto& item : *list) {
    const auto& from = field(item, "from", url, "a period");
    const auto& to = field(item, "to", url, "a period");
    const auto& intensity = field(item, "intensity", url, "a period");
    if (!from.is_string() || !to.is_string()) continue;
    const auto start = util::parse_utc_time(from.get<std::string>());
    const auto end = util::parse_utc_time(to.get<std::string>());
    if (!start || !end || *end <= *start) continue;
    IntensityPeriod p;
    p.start_wall_ns = *start;
    p.end_wall_ns = *end;
    // Measured where the API has it, else its forecast; a period with neither is a gap.
    if (intensity.contains("actual") && intensity["actual"].is_number()) {
      p.g_per_kwh = intensity["actual"].get<double>();
      p.kind = IntensityKind::Actual;
    } else if (intensity.contains("forecast") && intensity["forecast"].is_number()) {
      p.g_per_kwh = intensity["forecast"].get<double>();
      p.kind = IntensityKind::Forecast;
    } else {
      continue;
    }
    if (p.g_per_kwh < 0 || p.g_per_kwh > 5000) continue;
    if (!series.periods.empty() && p.start_wall_ns < series.periods.back().end_wall_ns) continue;
    series.periods.push_back(std::move(p));
  }
  return series;
}

IntensitySeries fetch_uk(const UkArea& area, std::int64_t start_wall_ns, std::int64_t end_wall_ns,
                         const FetchOptions& options) {
  // Whole half hours around the run: the API's periods start on :00 and :30.
  const std::int64_t from = start_wall_ns - start_wall_ns % kHalfHourNs;
  std::int64_t to = end_wall_ns + (kHalfHourNs - end_wall_ns % kHalfHourNs) % kHalfHourNs;
  if (to <= from) to = from + kHalfHourNs;
  std::string base = options.base_url.empty() ? std::string(kUkApiUrl) : options.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  const bool regional = area.region_id || area.postcode;
  std::string url = fmt::format("{}/{}intensity/{}/{}", base, regional ? "regional/" : "",
                                api_time(from), api_time(to));
  if (area.region_id) url += fmt::format("/regionid/{}", *area.region_id);
  if (area.postcode) url += "/postcode/" + *area.postcode;
  const HttpResponse r = get_with_retries(url, {"Accept: application/json"}, options);
  if (r.status == 200) {
    IntensitySeries series = parse_uk_answer(r.body, regional, url);
    if (series.region.empty()) series.region = area.name;
    return series;
  }
  const std::string said = body_excerpt(r.body);
  const std::string hint = r.status == 400 && regional ? "check --carbon-region (" + area.name + ")"
                           : r.status == 429           ? "the API is rate-limiting: try again later"
                                             : "try again later, or use --carbon-series FILE";
  throw Error(
      fmt::format("the UK Carbon Intensity API answered HTTP {} for {}", r.status, area.name),
      said.empty() ? fmt::format("GET {}", url) : said, hint);
}

}  // namespace gpuscope::carbon
