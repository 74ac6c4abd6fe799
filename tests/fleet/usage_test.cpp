// `gpuscope usage`'s sums per group from rows in memory: means weighted by GPU-hours over the
// jobs that have the figure, days and ISO weeks in the local time zone, empty fields as (none).
#include "fleet/usage.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/fixed_time_zone.hpp"

namespace gpuscope::fleet {
namespace {

using gpuscope::testing::FixedTimeZone;

SiteJob job(const std::string& user, double gpu_hours, std::optional<double> util) {
  SiteJob j;
  j.id = user + std::to_string(gpu_hours);
  j.user = user;
  j.account = "physics";
  j.partition = "gpu";
  j.gpu_hours = gpu_hours;
  j.util_pct = util;
  j.end_ms = 1795924200000;
  j.start_ms = j.end_ms - 3'600'000;
  j.source = util ? JobSource::Tsdb : JobSource::None;
  return j;
}

const UsageRow& row(const std::vector<UsageRow>& rows, const std::string& group) {
  for (const auto& r : rows) {
    if (r.group == group) return r;
  }
  throw std::runtime_error("no group " + group);
}

TEST(Usage, MeansAreWeightedByGpuHoursOverTheJobsThatHaveThem) {
  auto a = job("alice", 1, 90);
  auto b = job("alice", 3, 10);
  b.sm_active_pct = 20;
  b.score = 0.5;
  b.idle_gpu_hours = 1.5;
  b.energy_j = 7.2e6;
  b.co2_g = 950;
  b.flags = {JobFlag::IdleGpus};
  auto c = job("alice", 10, std::nullopt);
  const std::vector<SiteJob> jobs = {a, b, c, job("bob", 2, 50)};
  const auto rows = group_usage(jobs, UsageBy::User);
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0].group, "alice") << "most GPU-hours first";
  const UsageRow& r = rows[0];
  EXPECT_EQ(r.jobs, 3);
  EXPECT_DOUBLE_EQ(r.gpu_hours, 14);
  EXPECT_NEAR(*r.util_pct, (90 * 1 + 10 * 3) / 4.0, 1e-12) << "c has no figure: not weighed";
  EXPECT_NEAR(*r.sm_active_pct, 20, 1e-12);
  EXPECT_NEAR(*r.score, 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(r.idle_gpu_hours, 1.5);
  EXPECT_DOUBLE_EQ(r.energy_j, 7.2e6);
  EXPECT_DOUBLE_EQ(r.co2_g, 950);
  EXPECT_EQ(r.jobs_without_figures, 1);
  EXPECT_EQ(r.flagged_jobs, 1);
  EXPECT_FALSE(rows[1].sm_active_pct) << "no job of bob's has it";

  const UsageRow all = usage_total(jobs);
  EXPECT_EQ(all.group, "all");
  EXPECT_EQ(all.jobs, 4);
  EXPECT_NEAR(*all.util_pct, (90 * 1 + 10 * 3 + 50 * 2) / 6.0, 1e-12);
}

TEST(Usage, EmptyFieldsAreTheGroupNone) {
  auto a = job("", 1, 10);
  a.account = "";
  a.partition = "";
  const std::vector<SiteJob> jobs = {a, job("bob", 2, 50)};
  for (const UsageBy by :
       {UsageBy::User, UsageBy::Account, UsageBy::Partition, UsageBy::GpuModel}) {
    const auto rows = group_usage(jobs, by);
    EXPECT_NO_THROW(row(rows, "(none)")) << usage_by_word(by);
  }
  EXPECT_EQ(row(group_usage(jobs, UsageBy::GpuModel), "(none)").jobs, 2);
}

TEST(Usage, DaysAndWeeksAreLocal) {
  FixedTimeZone tokyo("JST-9");
  auto sunday = job("alice", 1, 10);
  sunday.end_ms = 1795960800000;  // 2026-11-29T14:00:00Z: Sunday 23:00 in Tokyo
  auto monday = job("alice", 2, 10);
  monday.end_ms = 1795968000000;  // 2026-11-29T16:00:00Z: Monday 01:00 in Tokyo
  auto new_year = job("alice", 4, 10);
  new_year.end_ms = 1798729200000;  // 2026-12-31T15:00:00Z: 2027-01-01 00:00 in Tokyo
  const std::vector<SiteJob> jobs = {new_year, monday, sunday};
  const auto days = group_usage(jobs, UsageBy::Day);
  ASSERT_EQ(days.size(), 3U);
  EXPECT_EQ(days[0].group, "2026-11-29") << "days in time order";
  EXPECT_EQ(days[1].group, "2026-11-30");
  EXPECT_EQ(days[2].group, "2027-01-01");
  const auto weeks = group_usage(jobs, UsageBy::Week);
  ASSERT_EQ(weeks.size(), 3U);
  EXPECT_EQ(weeks[0].group, "2026-W48");
  EXPECT_EQ(weeks[1].group, "2026-W49");
  EXPECT_EQ(weeks[2].group, "2026-W53") << "the ISO year of 2027-01-01 is 2026";
  EXPECT_EQ(local_day(sunday.end_ms), "2026-11-29");
  {
    FixedTimeZone utc("UTC");
    EXPECT_EQ(local_day(monday.end_ms), "2026-11-29");
    EXPECT_EQ(local_week(monday.end_ms), "2026-W48");
  }
  EXPECT_EQ(local_week(monday.end_ms), "2026-W49") << "Tokyo again once the inner zone ends";
}

TEST(Usage, ByWordsRoundTrip) {
  for (const UsageBy by : {UsageBy::User, UsageBy::Account, UsageBy::Partition, UsageBy::GpuModel,
                           UsageBy::Day, UsageBy::Week}) {
    EXPECT_EQ(parse_usage_by(usage_by_word(by)), by);
  }
  EXPECT_FALSE(parse_usage_by("month"));
}

}  // namespace
}  // namespace gpuscope::fleet
