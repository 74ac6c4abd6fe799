#include "carbon/electricity_maps.hpp"

#include <fmt/format.h>

#include <cctype>
#include <nlohmann/json.hpp>

#include "carbon/series_file.hpp"
#include "core/error.hpp"
#include "util/small_file.hpp"
#include "util/utc_time.hpp"

namespace gpuscope::carbon {
namespace {

constexpr std::int64_t kHourNs = 3600LL * 1'000'000'000;

std::string trimmed_first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
    line.pop_back();
  }
  const auto first = line.find_first_not_of(" \t");
  return first == std::string::npos ? std::string() : line.substr(first);
}

}  // namespace

std::string electricity_maps_token(const std::optional<std::filesystem::path>& file,
                                   const std::string& env_value) {
  constexpr const char* kHow =
      "put the token in ELECTRICITYMAPS_TOKEN, or in a file given with --carbon-token-file (never "
      "on the command line, where other users see it)";
  if (file) {
    auto text = util::read_small_file(file->string(), 64 * 1024);
    if (!text) throw Error::usage("cannot read " + file->string(), text.error().reason, kHow);
    std::string token = trimmed_first_line(*text);
    if (token.empty()) throw Error::usage(file->string() + " holds no token", {}, kHow);
    return token;
  }
  const std::string token = trimmed_first_line(env_value);
  if (token.empty()) throw Error::usage("Electricity Maps needs a token", {}, kHow);
  return token;
}

IntensitySeries parse_electricity_maps_answer(std::string_view body, std::string_view zone) {
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(body);
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("Electricity Maps' answer for {} is not JSON", zone), e.what(),
                "try again later, or use --carbon-series FILE");
  }
  const nlohmann::json* list = nullptr;
  if (document.is_object()) {
    if (document.contains("data")) list = &document["data"];
    if (document.contains("history")) list = &document["history"];
  }
  if (list == nullptr || !list->is_array()) {
    throw Error(
        fmt::format("Electricity Maps' answer for {} is not a carbon-intensity history", zone),
        "no \"data\" or \"history\" list", "check --carbon-url");
  }
  IntensitySeries series;
  series.source = "Electricity Maps";
  series.region = std::string(zone);
  for (const auto& item : *list) {
    if (!item.is_object() || !item.contains("datetime") || !item["datetime"].is_string() ||
        !item.contains("carbonIntensity") || !item["carbonIntensity"].is_number()) {
      continue;  // an hour without a figure is a gap
    }
    const auto start = util::parse_utc_time(item["datetime"].get<std::string>());
    const double g = item["carbonIntensity"].get<double>();
    if (!start || g < 0 || g > 5000) continue;
    IntensityPeriod p;
    p.start_wall_ns = *start;
    p.end_wall_ns = *start + kHourNs;
    p.g_per_kwh = g;
    const bool estimated = item.contains("isEstimated") && item["isEstimated"].is_boolean() &&
                           item["isEstimated"].get<bool>();
    p.kind = estimated ? IntensityKind::Estimated : IntensityKind::Actual;
    if (!series.periods.empty() && p.start_wall_ns < series.periods.back().end_wall_ns) continue;
    series.periods.push_back(std::move(p));
  }
  return series;
}

IntensitySeries fetch_electricity_maps(const std::string& zone, const std::string& token,
                                       std::int64_t start_wall_ns, std::int64_t end_wall_ns,
                                       const FetchOptions& options) {
  const std::int64_t from = start_wall_ns - start_wall_ns % kHourNs;
  std::int64_t to = end_wall_ns + (kHourNs - end_wall_ns % kHourNs) % kHourNs;
  if (to <= from) to = from + kHourNs;
  std::string base = options.base_url.empty() ? std::string(kElectricityMapsUrl) : options.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  const std::string url = fmt::format(
      "{}/v3/carbon-intensity/past-range?zone={}&start={}&end={}", base, http::url_encode(zone),
      util::utc_text(from, "%Y-%m-%dT%H:%M:%SZ"), util::utc_text(to, "%Y-%m-%dT%H:%M:%SZ"));
  const HttpResponse r =
      get_with_retries(url, {"Accept: application/json", "auth-token: " + token}, options);
  if (r.status == 200) return parse_electricity_maps_answer(r.body, zone);
  const std::string said = body_excerpt(r.body);
  std::string hint = "try again later, or use --carbon-series FILE";
  if (r.status == 401 || r.status == 403) {
    hint =
        "the token was refused: check ELECTRICITYMAPS_TOKEN or --carbon-token-file, and that "
        "your plan covers this zone and its history";
  } else if (r.status == 404 || r.status == 400) {
    hint = "check the zone (--carbon-region), e.g. DE, FR, GB, US-CAL-CISO";
  } else if (r.status == 429) {
    hint = "the API is rate-limiting: try again later";
  }
  // The message names the zone and the path, never the token.
  throw Error(fmt::format("Electricity Maps answered HTTP {} for zone {}", r.status, zone),
              said.empty() ? "GET /v3/carbon-intensity/past-range" : said, hint);
}

}  // namespace gpuscope::carbon
