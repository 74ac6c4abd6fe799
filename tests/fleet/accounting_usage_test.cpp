// The accounting database's usage (whole local days from its day sums, the jobs of the part days
// around them) against fleet::group_usage over the same rows in memory: a few hundred random jobs
// over a week, windows that start and end on midnights, inside days and inside one day, filters,
// every grouping and the total. One definition of each sum, whichever way it is asked.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "fleet/usage.hpp"
#include "store/accounting_db.hpp"
#include "support/fixed_time_zone.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::fleet {
namespace {

using gpuscope::testing::FixedTimeZone;
using gpuscope::testing::TempDir;

constexpr std::int64_t kHour = 3'600'000;
constexpr std::int64_t kDay = 24 * kHour;
constexpr std::int64_t kFirstDay = 1795532400000;  // 2026-11-25T00:00 in Tokyo (JST-9), a Wednesday

std::vector<SiteJob> random_jobs(std::size_t count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const auto pick = [&](const std::vector<std::string>& words) {
    return words[std::uniform_int_distribution<std::size_t>(0, words.size() - 1)(rng)];
  };
  const auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };
  const auto real = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  std::vector<SiteJob> jobs;
  for (std::size_t i = 0; i < count; ++i) {
    SiteJob j;
    j.id = std::to_string(1000 + i);
    j.shown_id = j.id;
    j.user = pick({"alice", "bob", "carol", ""});
    j.account = pick({"physics", "chemistry", ""});
    j.partition = pick({"gpu", "a100", "debug"});
    j.state = pick({"COMPLETED", "FAILED", "TIMEOUT"});
    j.gpu_model = pick({"h100", "a100", ""});
    j.end_ms = kFirstDay + static_cast<std::int64_t>(real(0, 7 * kDay));
    j.start_ms = j.end_ms - static_cast<std::int64_t>(real(60'000, 10 * kHour));
    j.gpus = static_cast<int>(real(1, 9));
    j.gpu_hours = static_cast<double>(j.end_ms - j.start_ms) / kHour * j.gpus;
    j.nodes = {"n1"};
    if (chance(0.8)) {
      j.source = JobSource::Tsdb;
      j.util_pct = real(0, 100);
      if (chance(0.6)) j.sm_active_pct = real(0, 100);
      if (chance(0.4)) j.score = real(0, 1);
      if (chance(0.9)) j.idle_gpu_hours = real(0, j.gpu_hours);
      if (chance(0.7)) {
        j.energy_j = real(0, 1e8);
        j.co2_g = *j.energy_j / 3.6e6 * 475;
      }
      if (chance(0.3)) j.flags.push_back(JobFlag::IdleGpus);
      if (chance(0.1)) j.flags.push_back(JobFlag::HealthFault);
    }
    jobs.push_back(std::move(j));
  }
  return jobs;
}

bool near(double a, double b) {
  return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)});
}

void expect_same(const UsageRow& db, const UsageRow& memory) {
  SCOPED_TRACE("group " + memory.group);
  EXPECT_EQ(db.group, memory.group);
  EXPECT_EQ(db.jobs, memory.jobs);
  EXPECT_PRED2(near, db.gpu_hours, memory.gpu_hours);
  EXPECT_PRED2(near, db.idle_gpu_hours, memory.idle_gpu_hours);
  EXPECT_PRED2(near, db.energy_j, memory.energy_j);
  EXPECT_PRED2(near, db.co2_g, memory.co2_g);
  for (const auto field : {&UsageRow::util_pct, &UsageRow::sm_active_pct, &UsageRow::score}) {
    ASSERT_EQ((db.*field).has_value(), (memory.*field).has_value());
    if ((db.*field).has_value()) {
      EXPECT_PRED2(near, *(db.*field), *(memory.*field));
    }
  }
  EXPECT_EQ(db.jobs_without_figures, memory.jobs_without_figures);
  EXPECT_EQ(db.flagged_jobs, memory.flagged_jobs);
}

std::vector<SiteJob> matching(const std::vector<SiteJob>& jobs, const store::JobQuery& q) {
  const auto in = [](const std::vector<std::string>& list, const std::string& v) {
    return list.empty() || std::find(list.begin(), list.end(), v) != list.end();
  };
  std::vector<SiteJob> out;
  for (const auto& j : jobs) {
    if (q.from_ms && j.end_ms < *q.from_ms) continue;
    if (q.to_ms && j.end_ms >= *q.to_ms) continue;
    if (!in(q.users, j.user) || !in(q.accounts, j.account) || !in(q.partitions, j.partition) ||
        !in(q.states, j.state)) {
      continue;
    }
    out.push_back(j);
  }
  return out;
}

class AccountingUsage : public ::testing::Test {
 protected:
  void SetUp() override {
    jobs_ = random_jobs(400, 20261125);
    auto db = store::AccountingDb::open_for_update(dir_.file("accounting.db"));
    // Three overlapping batches: each job counted once, whichever batch brought it.
    const std::size_t thirds[] = {0, 150, 300, jobs_.size()};
    for (int b = 0; b < 3; ++b) {
      const std::size_t from = thirds[b] >= 20 ? thirds[b] - 20 : 0;
      const std::vector<SiteJob> batch(jobs_.begin() + static_cast<std::ptrdiff_t>(from),
                                       jobs_.begin() + static_cast<std::ptrdiff_t>(thirds[b + 1]));
      const auto update = db.begin_update(kFirstDay, kFirstDay + 7 * kDay, "http://tsdb.test");
      db.add_jobs(batch, kFirstDay + (b + 1) * kDay, update, 475);
      db.finish_update(update, "done", "");
    }
  }

  // Every grouping and the total of `q`, from the database and in memory.
  void check(const store::JobQuery& q) {
    auto db = store::AccountingDb::open_for_reading(dir_.file("accounting.db"));
    const auto rows = matching(jobs_, q);
    ASSERT_EQ(db.count_jobs(q), static_cast<std::int64_t>(rows.size()));
    for (const UsageBy by : {UsageBy::User, UsageBy::Account, UsageBy::Partition, UsageBy::GpuModel,
                             UsageBy::Day, UsageBy::Week}) {
      SCOPED_TRACE(std::string("by ") + std::string(usage_by_word(by)));
      std::map<std::string, UsageRow> from_db;
      for (const auto& r : db.usage(q, by)) from_db[r.group] = r;
      const auto memory = group_usage(rows, by);
      ASSERT_EQ(from_db.size(), memory.size());
      for (const auto& m : memory) {
        ASSERT_EQ(from_db.count(m.group), 1U) << m.group;
        expect_same(from_db.at(m.group), m);
      }
    }
    SCOPED_TRACE("total");
    expect_same(db.total(q), usage_total(rows));
  }

  FixedTimeZone tokyo_{"JST-9"};
  TempDir dir_;
  std::vector<SiteJob> jobs_;
};

TEST_F(AccountingUsage, EverythingAtOnce) {
  check({});
}

TEST_F(AccountingUsage, WholeDays) {
  store::JobQuery q;
  q.from_ms = kFirstDay + kDay;
  q.to_ms = kFirstDay + 4 * kDay;
  check(q);
}

TEST_F(AccountingUsage, AWindowThatStartsAndEndsInsideDays) {
  store::JobQuery q;
  q.from_ms = kFirstDay + kDay + 7 * kHour + 13 * 60'000 + 123;
  q.to_ms = kFirstDay + 4 * kDay + 18 * kHour + 40 * 60'000;
  check(q);
  q.to_ms.reset();
  check(q);
  q.to_ms = kFirstDay + 5 * kDay + kHour;
  q.from_ms.reset();
  check(q);
}

TEST_F(AccountingUsage, WindowsInsideOneDayAndAcrossOneMidnight) {
  store::JobQuery q;
  q.from_ms = kFirstDay + 2 * kDay + 3 * kHour;
  q.to_ms = kFirstDay + 2 * kDay + 20 * kHour;
  check(q);
  q.from_ms = kFirstDay + 2 * kDay + 10 * kHour;
  q.to_ms = kFirstDay + 3 * kDay + 5 * kHour;
  check(q);
}

TEST_F(AccountingUsage, FiltersByUserAccountPartitionAndState) {
  store::JobQuery q;
  q.from_ms = kFirstDay + kDay + 5 * kHour;
  q.to_ms = kFirstDay + 6 * kDay + 5 * kHour;
  q.users = {"alice", ""};
  check(q);
  q.users.clear();
  q.accounts = {"physics"};
  q.partitions = {"gpu", "a100"};
  check(q);
  q.states = {"FAILED"};
  check(q);
}

}  // namespace
}  // namespace gpuscope::fleet
