// util/utc_time: wall-clock times as UTC text and back: ISO 8601 with a zone or Unix seconds,
// nothing without a zone, nothing outside 1970 to 2096.
#include <gtest/gtest.h>

#include "util/utc_time.hpp"

namespace gpuscope::util {
namespace {

constexpr std::int64_t kS = 1'000'000'000;
// 2026-11-25T13:00:00Z
constexpr std::int64_t kT0 = 1'795'611'600LL * kS;

TEST(UtcTime, ParsesIsoWithZonesAndUnixSeconds) {
  EXPECT_EQ(parse_utc_time("2026-11-25T13:00Z"), kT0);
  EXPECT_EQ(parse_utc_time("2026-11-25T13:00:00Z"), kT0);
  EXPECT_EQ(parse_utc_time("2026-11-25 14:00:00+01:00"), kT0);
  EXPECT_EQ(parse_utc_time("2026-11-25T08:30:00-04:30"), kT0);
  EXPECT_EQ(parse_utc_time("2026-11-25T13:00:00.25Z"), kT0 + kS / 4);
  EXPECT_EQ(parse_utc_time("1795611600"), kT0);
  EXPECT_EQ(parse_utc_time("1795611600.5"), kT0 + kS / 2);
  // No zone is a guess: refused. So are impossible dates and garbage.
  EXPECT_FALSE(parse_utc_time("2026-11-25T13:00:00").has_value());
  EXPECT_FALSE(parse_utc_time("2026-02-30T13:00Z").has_value());
  EXPECT_FALSE(parse_utc_time("2026-13-01T00:00Z").has_value());
  EXPECT_FALSE(parse_utc_time("yesterday").has_value());
  EXPECT_FALSE(parse_utc_time("").has_value());
  EXPECT_FALSE(parse_utc_time("2026-11-25T13:00Zjunk").has_value());
  // 1970 to 2096, as Unix seconds are: far from where ns since 1970 overflow (fuzz_grid_series).
  EXPECT_FALSE(parse_utc_time("1013-11-25T13:00Z").has_value());
  EXPECT_FALSE(parse_utc_time("9999-12-31T23:59Z").has_value());
  EXPECT_FALSE(parse_utc_time("1969-12-31T23:59Z").has_value());
  EXPECT_FALSE(parse_utc_time("1970-01-01T00:30+01:00").has_value());
  EXPECT_EQ(parse_utc_time("1970-01-01T00:00Z"), 0);
  EXPECT_EQ(parse_utc_time("2096-10-02T07:06:40Z"), 4'000'000'000 * kS);
  EXPECT_FALSE(parse_utc_time("4000000001").has_value());
}

TEST(UtcTime, TextAndBack) {
  EXPECT_EQ(utc_text(kT0, "%Y-%m-%dT%H:%MZ"), "2026-11-25T13:00Z");
  EXPECT_EQ(parse_utc_time(utc_text(kT0 + 59 * kS, "%Y-%m-%dT%H:%M:%SZ")), kT0 + 59 * kS);
}

}  // namespace
}  // namespace gpuscope::util
