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
