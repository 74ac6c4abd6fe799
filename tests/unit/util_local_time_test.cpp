// util/local_time: times in the process's zone as text, and the local midnights around them
// (the day's start and end), across a daylight-saving change.
#include <gtest/gtest.h>

#include "support/fixed_time_zone.hpp"
#include "util/local_time.hpp"

namespace gpuscope::util {
namespace {

constexpr std::int64_t kMs = 1000;
constexpr const char* kCentralEurope = "CET-1CEST,M3.5.0,M10.5.0/3";  // POSIX: no tzdata needed

TEST(LocalTime, TextIsInTheProcesssZone) {
  const testing::FixedTimeZone zone(kCentralEurope);
  // 2026-11-25T13:00Z is 14:00 in winter (UTC+1).
  EXPECT_EQ(local_text(1'795'611'600 * kMs, "%Y-%m-%d %H:%M"), "2026-11-25 14:00");
  EXPECT_EQ(local_text(1'795'611'600 * kMs + 999, "%H:%M:%S"), "14:00:00");  // truncated
  EXPECT_EQ(local_text(1'795'611'600 * kMs, "%G-W%V"), "2026-W48");
}

TEST(LocalTime, MidnightsAroundAWinterDay) {
  const testing::FixedTimeZone zone(kCentralEurope);
  const std::int64_t t = 1'795'611'600 * kMs;      // 2026-11-25 14:00 local
  const std::int64_t start = 1'795'561'200 * kMs;  // 2026-11-25 00:00 local (23:00Z before)
  const std::int64_t end = 1'795'647'600 * kMs;    // 2026-11-26 00:00 local
  EXPECT_EQ(local_midnight_before(t), start);
  EXPECT_EQ(local_midnight_after(t, false), end);
  EXPECT_EQ(local_midnight_after(t, true), end);
  // A midnight itself starts its day; `unless_exact` keeps it, else the day after it ends.
  EXPECT_EQ(local_midnight_before(start), start);
  EXPECT_EQ(local_midnight_after(start, true), start);
  EXPECT_EQ(local_midnight_after(start, false), end);
  EXPECT_EQ(local_midnight_after(start + 1, true), end);
}

TEST(LocalTime, TheDayTheClocksGoForwardHas23Hours) {
  const testing::FixedTimeZone zone(kCentralEurope);
  const std::int64_t noon = 1'774'785'600 * kMs;  // 2026-03-29T12:00Z, 14:00 CEST
  const std::int64_t start = local_midnight_before(noon);
  const std::int64_t end = local_midnight_after(noon, false);
  EXPECT_EQ(start, 1'774'738'800 * kMs);  // 00:00 CET = 23:00Z the day before
  EXPECT_EQ(end, 1'774'821'600 * kMs);    // 00:00 CEST = 22:00Z
  EXPECT_EQ(end - start, 23 * 3600 * kMs);
}

TEST(LocalTime, TimesBefore1970AreFloored) {
  const testing::FixedTimeZone zone("UTC0");
  EXPECT_EQ(local_text(-1, "%Y-%m-%d %H:%M:%S"), "1969-12-31 23:59:59");
}

}  // namespace
}  // namespace gpuscope::util
