#include "carbon/grid_source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "carbon/electricity_maps.hpp"
#include "carbon/fetch.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"

namespace gpuscope::carbon {
namespace {

constexpr std::int64_t kDayNs = 24LL * 3600 * 1'000'000'000;

// Asks the source; nullopt (and a warning and a note) when it cannot answer.
std::optional<IntensitySeries> fetch(const GridRequest& r, std::int64_t start, std::int64_t end,
                                     std::vector<std::string>& notes) {
  // The day after the run too, where the API has it (forecasts 48 h ahead): the greener-start
  // estimate moves the job's energy profile over it.
  const std::int64_t fetch_end = std::min(end + kDayNs, wall_now_ns() + 2 * kDayNs);
  FetchOptions options;
  options.base_url = r.base_url;
  try {
    return r.uk ? fetch_uk(r.area, start, std::max(end, fetch_end), options)
                : fetch_electricity_maps(r.area.name, r.token, start, end, options);
  } catch (const Error& e) {
    if (e.exit_code() == 2) throw;
    const std::string what = e.reason().empty() ? e.summary() : e.summary() + ": " + e.reason();
    fmt::print(stderr, "gpuscope: warning: {}; carbon is counted at the yearly average\n", what);
    notes.push_back(
        fmt::format("the grid intensity could not be fetched ({}); carbon is "
                    "counted at the yearly average named below",
                    what));
    return std::nullopt;
  }
}

}  // namespace

std::string GridRequest::key() const {
  return std::string(uk ? "uk:" : "electricitymaps:") + area.name;
}

std::string GridRequest::source_name() const {
  return uk ? "the UK Carbon Intensity API" : "Electricity Maps";
}

GridRequest grid_request(const GridOptions& o, const std::string& env_token) {
  GridRequest r;
  r.uk = o.source == "uk";
  if (!r.uk && o.source != "electricitymaps") {
    throw Error::usage(fmt::format("unknown --carbon-source '{}'", o.source), {},
                       "use uk (the UK Carbon Intensity API), electricitymaps (with a token), or "
                       "--carbon-series FILE for your own figures");
  }
  if (o.with_series_file) {
    throw Error::usage("--carbon-source and --carbon-series cannot be combined", {},
                       "give one of them");
  }
  if (o.with_intensity) {
    throw Error::usage("--carbon-source and --carbon-intensity cannot be combined", {},
                       "--carbon-intensity is one flat figure; give one of them");
  }
  r.base_url = o.base_url;
  r.refetch = o.refetch;
  if (r.uk) {
    r.area = parse_uk_area(o.region);
    return r;
  }
  if (o.region.empty()) {
    throw Error::usage("--carbon-source electricitymaps needs --carbon-region ZONE", {},
                       "give the zone, e.g. DE, FR, GB, US-CAL-CISO");
  }
  r.area.name = o.region;
  std::optional<std::filesystem::path> token_file;
  if (o.token_file) token_file = *o.token_file;
  r.token = electricity_maps_token(token_file, env_token);
  return r;
}

std::optional<IntensitySeries> grid_series(const GridRequest& r, std::int64_t start,
                                           std::int64_t end, GridCache& cache,
                                           std::vector<std::string>& notes) {
  auto covers = [&](const IntensitySeries& s) {
    return !s.periods.empty() && s.periods.front().start_wall_ns <= start &&
           s.periods.back().end_wall_ns >= end;
  };
  if (!r.refetch) {
    if (auto kept = cache.load(r.key()); kept && covers(*kept)) {
      notes.push_back(
          fmt::format("grid intensity for {} as stored in {} (--carbon-refetch to "
                      "ask again)",
                      r.area.name, cache.where()));
      return kept;
    }
  }
  auto series = fetch(r, start, end, notes);
  if (!series) return std::nullopt;
  if (series->periods.empty()) {
    notes.push_back(
        fmt::format("{} had no figures for {} over the run; carbon is counted at the "
                    "yearly average named below",
                    r.source_name(), r.area.name));
    return std::nullopt;
  }
  const bool forecast_only =
      std::all_of(series->periods.begin(), series->periods.end(),
                  [](const IntensityPeriod& p) { return p.kind == IntensityKind::Forecast; });
  if (forecast_only) {
    notes.push_back(fmt::format("{}: the API gives forecasts only{}, no measured figures",
                                series->region,
                                r.area.region_id || r.area.postcode ? " for regions" : " so far"));
  }
  try {
    cache.save(r.key(), *series, wall_now_ns());
  } catch (const Error& e) {
    notes.push_back(
        fmt::format("the fetched grid intensity could not be stored in {} ({}); a "
                    "later analysis will fetch it again",
                    cache.where(), e.reason().empty() ? e.summary() : e.reason()));
  }
  return series;
}

std::string uk_region_list(const std::string& base_url) {
  std::map<int, double> forecast;
  std::string when;
  try {
    const auto r = http::get((base_url.empty() ? std::string(kUkApiUrl) : base_url) + "/regional",
                             {"Accept: application/json"}, std::chrono::milliseconds(5000));
    const auto doc = nlohmann::json::parse(r.body);
    const auto& entry = doc.at("data").at(0);
    when = entry.value("from", "");
    for (const auto& region : entry.at("regions")) {
      forecast[region.at("regionid").get<int>()] =
          region.at("intensity").at("forecast").get<double>();
    }
  } catch (const std::exception&) {
    when.clear();  // offline: the names alone
  }
  std::string out = fmt::format(
      "UK Carbon Intensity API regions (--carbon-source uk --carbon-region ID|NAME|POSTCODE"
      "; GB for Great Britain){}\n",
      when.empty() ? "" : ", forecast for " + when);
  for (const auto& region : uk_regions()) {
    auto it = forecast.find(region.id);
    out += fmt::format("  {:>2}  {:<26}{}\n", region.id, region.name,
                       it == forecast.end() ? "" : fmt::format("{:>5.0f} gCO2e/kWh", it->second));
  }
  return out;
}

}  // namespace gpuscope::carbon
