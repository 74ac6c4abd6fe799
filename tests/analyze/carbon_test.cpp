#include "analyze/carbon.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

namespace gpuscope::analyze {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr double kJoulesPerKwh = 3.6e6;

TEST(GridRegions, LookupIgnoresCaseAndKnowsTheUk) {
  const auto france = find_region("fr");
  ASSERT_TRUE(france);
  EXPECT_EQ(france->code, "FR");
  EXPECT_EQ(france->g_per_kwh, 56.0);
  EXPECT_EQ(france->year, 2023);

  const auto uk = find_region("UK");
  ASSERT_TRUE(uk);
  EXPECT_EQ(uk->code, "GB");
  EXPECT_EQ(uk->g_per_kwh, 237.6);
  EXPECT_EQ(find_region("gb")->g_per_kwh, 237.6);

  const auto grid_api = find_region("gb-neso");
  ASSERT_TRUE(grid_api);
  EXPECT_EQ(grid_api->g_per_kwh, 162.0);
  EXPECT_EQ(grid_api->year, 2023);
  EXPECT_EQ(find_region("UK-NESO")->code, "GB-NESO");

  EXPECT_EQ(find_region("World")->g_per_kwh, 475.0);
  EXPECT_EQ(find_region("jp")->g_per_kwh, 485.4);
  EXPECT_FALSE(find_region("XX"));
  EXPECT_FALSE(find_region(""));
  EXPECT_FALSE(find_region("FRA"));
}

TEST(GridRegions, TableIsComplete) {
  // REFERENCE §3: twelve countries, the second UK figure and the world fallback.
  std::set<std::string> codes;
  for (const GridRegion& region : builtin_regions()) {
    EXPECT_TRUE(codes.insert(std::string(region.code)).second) << region.code;
    EXPECT_FALSE(region.name.empty()) << region.code;
    EXPECT_FALSE(region.source.empty()) << region.code;
    EXPECT_GE(region.year, 2019) << region.code;
    EXPECT_GT(region.g_per_kwh, 0) << region.code;
  }
  for (const char* code : {"FR", "US", "DE", "GB", "GB-NESO", "CN", "IN", "NO", "SE", "PL", "CA",
                           "CH", "JP", "WORLD"}) {
    EXPECT_EQ(codes.count(code), 1u) << code;
  }
  EXPECT_EQ(codes.size(), 14u);
}

TEST(CarbonGrams, ConstantIntensity) {
  // 1 kWh at 400 g/kWh in a facility of PUE 1.2: 480 g.
  EXPECT_DOUBLE_EQ(carbon_grams(kJoulesPerKwh, 400, 1.2), 480);
  // 500 W for an hour in France: 0.5 kWh · 56 = 28 g.
  EXPECT_DOUBLE_EQ(carbon_grams(500.0 * 3600, find_region("FR")->g_per_kwh, 1.0), 28);
  EXPECT_TRUE(std::isnan(carbon_grams(kJoulesPerKwh, 400, 0.9)));
}

TEST(CarbonGrams, EnergySplitAcrossIntensityIntervals) {
  // 100 g/kWh over 0–10 s, 300 over 10–20 s. 1 kWh over 5–15 s: half at each, 200 g; PUE 1.5.
  const std::vector<IntensityInterval> intensity = {{0, 10 * kSecond, 100},
                                                    {10 * kSecond, 20 * kSecond, 300}};
  const std::vector<EnergyInterval> energy = {{5 * kSecond, 15 * kSecond, kJoulesPerKwh}};
  EXPECT_DOUBLE_EQ(carbon_grams(energy, intensity, 1.0), 200);
  EXPECT_DOUBLE_EQ(carbon_grams(energy, intensity, 1.5), 300);

  // Sample-sized intervals: 1 kJ per second for 20 s, 10 kJ at each intensity:
  // (10^4 / 3.6·10^6) · (100 + 300) = 1.1111 g.
  std::vector<EnergyInterval> per_second;
  for (std::int64_t s = 0; s < 20; ++s)
    per_second.push_back({s * kSecond, (s + 1) * kSecond, 1000});
  EXPECT_NEAR(carbon_grams(per_second, intensity, 1.0), 1e4 / kJoulesPerKwh * 400, 1e-12);
}

TEST(CarbonGrams, OutsideTheIntervalsTheNearestHolds) {
  // 100 over 0–10 s and 300 over 20–30 s; the gap is split at 15 s.
  const std::vector<IntensityInterval> intensity = {{20 * kSecond, 30 * kSecond, 300},
                                                    {0, 10 * kSecond, 100}};  // unsorted
  const auto grams = [&](std::int64_t start_s, std::int64_t end_s) {
    const std::vector<EnergyInterval> energy = {
        {start_s * kSecond, end_s * kSecond, kJoulesPerKwh}};
    return carbon_grams(energy, intensity, 1.0);
  };
  EXPECT_DOUBLE_EQ(grams(10, 20), 200);  // half before the midpoint, half after
  EXPECT_DOUBLE_EQ(grams(-5, 0), 100);   // before the first: the first
  EXPECT_DOUBLE_EQ(grams(40, 50), 300);  // after the last: it extends forever
  EXPECT_DOUBLE_EQ(grams(12, 12), 100);  // an instant, before the midpoint
  EXPECT_DOUBLE_EQ(grams(16, 16), 300);
}

TEST(CarbonGrams, EmptyInputs) {
  const std::vector<IntensityInterval> intensity = {{0, kSecond, 100}};
  EXPECT_EQ(carbon_grams(std::span<const EnergyInterval>{}, intensity, 1.0), 0);
  const std::vector<EnergyInterval> energy = {{0, kSecond, 1000}};
  EXPECT_TRUE(std::isnan(carbon_grams(energy, std::span<const IntensityInterval>{}, 1.0)));
  EXPECT_TRUE(std::isnan(carbon_grams(energy, intensity, 0.5)));
}

}  // namespace
}  // namespace gpuscope::analyze

namespace gpuscope::analyze {
namespace {

// The greener start, by hand: half-hour periods, the job's energy in the first two.
std::vector<IntensityPeriod> half_hours(const std::vector<double>& g, IntensityKind kind) {
  constexpr std::int64_t kHalfHour = 1800LL * 1'000'000'000;
  std::vector<IntensityPeriod> out;
  for (std::size_t i = 0; i < g.size(); ++i) {
    out.push_back({static_cast<std::int64_t>(i) * kHalfHour,
                   static_cast<std::int64_t>(i + 1) * kHalfHour, g[i], kind});
  }
  return out;
}

TEST(GreenerStart, MovesTheProfileToTheCleanestPeriods) {
  const auto periods = half_hours({300, 200, 400, 100, 50, 250}, IntensityKind::Forecast);
  const std::vector<double> energy{3.6e6, 7.2e6, 0, 0, 0, 0};  // 1 kWh, then 2 kWh
  const auto g = greener_start(periods, energy, 1.0, 24LL * 3600 * 1'000'000'000);
  ASSERT_TRUE(g);
  // As it ran: 1·300 + 2·200 = 700 g. Shifted by 3: 1·100 + 2·50 = 200 g, the least.
  EXPECT_EQ(g->shift, 3U);
  EXPECT_DOUBLE_EQ(g->baseline_grams, 700);
  EXPECT_DOUBLE_EQ(g->grams, 200);
  EXPECT_NEAR(g->saving, 1 - 200.0 / 700, 1e-12);
  EXPECT_EQ(g->start_wall_ns, periods[3].start_wall_ns);
  EXPECT_EQ(g->later_ns, 3 * 1800LL * 1'000'000'000);
  EXPECT_EQ(g->kind, IntensityKind::Forecast);
}

TEST(GreenerStart, StaysWithinTheHorizonAndNeverSpansAGap) {
  auto periods = half_hours({300, 200, 400, 100, 50, 250}, IntensityKind::Actual);
  const std::vector<double> energy{3.6e6, 7.2e6, 0, 0, 0, 0};
  // An hour's horizon allows shifts 1 and 2: shift 1 is 1·200 + 2·400 = 1000 g, shift 2 is
  // 1·400 + 2·100 = 600 g.
  const auto hour = greener_start(periods, energy, 1.0, 3600LL * 1'000'000'000);
  ASSERT_TRUE(hour);
  EXPECT_EQ(hour->shift, 2U);
  EXPECT_DOUBLE_EQ(hour->grams, 600);
  EXPECT_EQ(hour->kind, IntensityKind::Actual);
  // A gap before period 4: shift 3 (200 g) would lay the profile over it, so the best is
  // shift 4, over periods 4 and 5: 1·50 + 2·250 = 550 g.
  periods[4].start_wall_ns += 60LL * 1'000'000'000;
  const auto gap = greener_start(periods, energy, 1.0, 24LL * 3600 * 1'000'000'000);
  ASSERT_TRUE(gap);
  EXPECT_EQ(gap->shift, 4U);
  EXPECT_DOUBLE_EQ(gap->grams, 550);
}

TEST(GreenerStart, SaysEstimatedFiguresAreEstimates) {
  // Electricity Maps' estimated hours are a model's figures for the past: not measured (never
  // IntensityKind::Actual), not forecast; a forecast among the periods used makes the whole a
  // forecast.
  auto periods = half_hours({300, 200, 400, 100, 50, 250}, IntensityKind::Estimated);
  const std::vector<double> energy{3.6e6, 7.2e6, 0, 0, 0, 0};
  const auto estimated = greener_start(periods, energy, 1.0, 24LL * 3600 * 1'000'000'000);
  ASSERT_TRUE(estimated);
  EXPECT_EQ(estimated->shift, 3U);
  EXPECT_EQ(estimated->kind, IntensityKind::Estimated);
  periods[3].kind =
      IntensityKind::Actual;  // one measured period under the moved profile: still an estimate
  const auto mixed = greener_start(periods, energy, 1.0, 24LL * 3600 * 1'000'000'000);
  ASSERT_TRUE(mixed);
  EXPECT_EQ(mixed->kind, IntensityKind::Estimated);
  periods[4].kind = IntensityKind::Forecast;
  const auto forecast = greener_start(periods, energy, 1.0, 24LL * 3600 * 1'000'000'000);
  ASSERT_TRUE(forecast);
  EXPECT_EQ(forecast->kind, IntensityKind::Forecast);
}

TEST(GreenerStart, NothingWhenNoLaterStartIsCleaner) {
  const auto periods = half_hours({100, 200, 300}, IntensityKind::Forecast);
  EXPECT_FALSE(
      greener_start(periods, std::vector<double>{3.6e6, 0, 0}, 1.0, 24LL * 3600 * 1'000'000'000));
  EXPECT_FALSE(
      greener_start(periods, std::vector<double>{0, 0, 0}, 1.0, 24LL * 3600 * 1'000'000'000));
}

}  // namespace
}  // namespace gpuscope::analyze
