// A user's own grid intensity series: CSV and JSON, periods and point readings, times with zones,
// and every way such a file can be wrong, each a usage error naming the line or record.
#include "carbon/series_file.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "util/utc_time.hpp"

namespace gpuscope::carbon {
namespace {

constexpr std::int64_t kS = 1'000'000'000;
// 2026-11-25T13:00:00Z
constexpr std::int64_t kT0 = 1'795'611'600LL * kS;

TEST(SeriesFile, CsvPeriods) {
  const auto s = parse_series(
      "# our facility's figures\nstart,end,g_per_kwh\n"
      "2026-11-25T13:00Z,2026-11-25T13:30Z,180\n2026-11-25T13:30Z,2026-11-25T14:00Z,95.5\n",
      "grid.csv");
  EXPECT_EQ(s.source, "file grid.csv");
  ASSERT_EQ(s.periods.size(), 2U);
  EXPECT_EQ(s.periods[0].start_wall_ns, kT0);
  EXPECT_EQ(s.periods[0].end_wall_ns, kT0 + 1800 * kS);
  EXPECT_EQ(s.periods[0].g_per_kwh, 180);
  EXPECT_EQ(s.periods[1].g_per_kwh, 95.5);
  EXPECT_EQ(s.periods[1].kind, IntensityKind::Given);
}

TEST(SeriesFile, PointReadingsHoldUntilTheNext) {
  // Electricity Maps' export shape: a timestamp and carbonIntensity per row, out of order.
  const auto s = parse_series(
      "datetime,carbonIntensity\n2026-11-25T14:00Z,300\n2026-11-25T13:00Z,100\n", "points.csv");
  ASSERT_EQ(s.periods.size(), 2U);
  EXPECT_EQ(s.periods[0].end_wall_ns, kT0 + 3600 * kS);      // until the next reading
  EXPECT_EQ(s.periods[1].end_wall_ns, kT0 + 2 * 3600 * kS);  // as long as the one before
  const auto alone = parse_series("timestamp,intensity\n1795611600,50\n", "one.csv");
  EXPECT_EQ(alone.periods.at(0).end_wall_ns, kT0 + 3600 * kS);  // an hour when alone
}

TEST(SeriesFile, LocalTimesAcrossTheDaylightSavingChange) {
  // Europe/London on 2026-10-25: 01:30 BST (+01:00) is 00:30Z; the clocks go back and the next
  // local 01:00 is GMT (+00:00), 01:00Z. Local readings with their offsets are in order in UTC.
  const auto s = parse_series(
      "timestamp,g_per_kwh\n2026-10-25T01:00:00+01:00,150\n2026-10-25T01:30:00+01:00,140\n"
      "2026-10-25T01:00:00+00:00,130\n2026-10-25T01:30:00+00:00,120\n",
      "dst.csv");
  ASSERT_EQ(s.periods.size(), 4U);
  const std::int64_t first = *util::parse_utc_time("2026-10-25T00:00Z");
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(s.periods[i].start_wall_ns, first + static_cast<std::int64_t>(i) * 1800 * kS);
    EXPECT_EQ(s.periods[i].end_wall_ns - s.periods[i].start_wall_ns, 1800 * kS);
  }
  EXPECT_EQ(s.periods[2].g_per_kwh, 130);
}

TEST(SeriesFile, Json) {
  const auto a = parse_series(
      R"([{"from": "2026-11-25T13:00Z", "to": "2026-11-25T13:30Z", "intensity": 210},
          {"from": "2026-11-25T13:30Z", "to": "2026-11-25T14:00Z", "intensity": "190"}])",
      "a.json");
  ASSERT_EQ(a.periods.size(), 2U);
  EXPECT_EQ(a.periods[1].g_per_kwh, 190);
  const auto b =
      parse_series(R"({"data": [{"timestamp": 1795611600, "g_per_kwh": 42}]})", "b.json");
  EXPECT_EQ(b.periods.at(0).start_wall_ns, kT0);
}

void expect_usage_error(const std::string& text, const std::string& words) {
  try {
    (void)parse_series(text, "bad");
    FAIL() << "accepted: " << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(SeriesFile, BadFilesSayWhatAndWhere) {
  expect_usage_error("when,value\n2026-11-25T13:00Z,1\n", "names no start column");
  expect_usage_error("start,note\n2026-11-25T13:00Z,x\n", "names no intensity column");
  expect_usage_error("start,g_per_kwh\n2026-11-25T13:00,100\n",
                     "line 2: '2026-11-25T13:00' is not a time");
  expect_usage_error("start,g_per_kwh\n2026-11-25T13:00Z,-5\n", "line 2: intensity '-5'");
  expect_usage_error("start,g_per_kwh\n2026-11-25T13:00Z,nan\n", "intensity 'nan'");
  expect_usage_error("start,g_per_kwh\n2026-11-25T13:00Z,9000\n", "intensity '9000'");
  expect_usage_error("start,g_per_kwh\n2026-11-25T13:00Z,\n", "line 2 has no intensity");
  expect_usage_error("start,end,g_per_kwh\n2026-11-25T13:00Z,2026-11-25T12:00Z,5\n",
                     "is not a time after the start");
  expect_usage_error(
      "start,end,g_per_kwh\n2026-11-25T13:00Z,2026-11-25T14:00Z,5\n2026-11-25T13:30Z,2026-11-25T14:"
      "30Z,5\n",
      "line 3 overlaps");
  expect_usage_error("start,g_per_kwh\n", "holds no intensity figures");
  expect_usage_error("[1, 2]", "record 1 is not an object");
  expect_usage_error("{\"data\": 5}", "expected an array");
  expect_usage_error("[{\"start\": ", "is not valid JSON");
}

TEST(SeriesFile, AMissingFileIsAUsageError) {
  EXPECT_THROW((void)read_series_file("/nonexistent/grid.csv"), Error);
}

}  // namespace
}  // namespace gpuscope::carbon
