// The accounting database on real SQLite files: created then read back, each job added once
// however often a batch brings it, the covered time moved only with a batch that committed, a
// batch that fails on a full disk (tests/support/full_disk.hpp) leaving the file as it was, each
// file it cannot read refused in words, and the jobs' order, limit and filters.
#include "store/accounting_db.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "store/sqlite.hpp"
#include "support/fixed_time_zone.hpp"
#include "support/full_disk.hpp"
#include "support/sql.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::store {
namespace {

using gpuscope::testing::FixedTimeZone;
using gpuscope::testing::FullDisk;
using gpuscope::testing::number;
using gpuscope::testing::run_sql;
using gpuscope::testing::TempDir;

constexpr std::int64_t kHour = 3'600'000;
constexpr std::int64_t kEnd = 1795924200000;  // 2026-11-29T12:50:00 in Tokyo

SiteJob site_job(const std::string& id, std::optional<double> idle_gpu_hours,
                 std::int64_t end_ms = kEnd) {
  SiteJob j;
  j.id = id;
  j.shown_id = id + "_1";
  j.name = "train \"big\" | ü";
  j.user = "alice";
  j.account = "physics";
  j.partition = "gpu";
  j.state = "COMPLETED";
  j.exit_code = 0;
  j.end_ms = end_ms;
  j.start_ms = end_ms - 2 * kHour;
  j.nodes = {"n1", "n2"};
  j.gpus = 2;
  j.gpu_model = "h100";
  j.gpu_hours = 4;
  j.idle_gpu_hours = idle_gpu_hours;
  if (idle_gpu_hours) {
    j.source = JobSource::Tsdb;
    j.util_pct = 60;
    j.energy_j = 7.2e6;
    j.co2_g = 950;
    j.flags = {JobFlag::IdleGpus, JobFlag::HealthFault};
    j.notes = {"1 of the 2 allocated GPUs have series", "second note"};
    SiteJobGpu g;
    g.key = "GPU-" + id;
    g.node = "n1";
    g.index = 0;
    g.model = "NVIDIA H100 80GB HBM3";
    g.samples = 480;
    g.util_pct = 60;
    g.idle_share = 0.5;
    g.energy_j = 7.2e6;
    g.energy_source = EnergySource::Counter;
    g.health_faults = 1;
    j.gpu_rows = {g};
  }
  return j;
}

// Adds `jobs` in an update of their own; what add_jobs returned.
std::size_t add(AccountingDb& db, const std::vector<SiteJob>& jobs, std::int64_t covered_ms) {
  const auto update = db.begin_update(kEnd - 24 * kHour, kEnd, "http://tsdb.test:9090");
  const std::size_t added = db.add_jobs(jobs, covered_ms, update, 475);
  db.finish_update(update, "done", "");
  return added;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

class AccountingDbTest : public ::testing::Test {
 protected:
  std::string path() const { return dir_.file("accounting.db"); }
  double sql(const std::string& query) const { return number(path(), query); }

  FixedTimeZone tokyo_{"JST-9"};
  TempDir dir_;
};

TEST_F(AccountingDbTest, CreatedThenReadBack) {
  {
    auto db = AccountingDb::open_for_update(path());
    EXPECT_FALSE(db.covered_until_ms()) << "no batch yet";
    EXPECT_EQ(add(db, {site_job("1", 0.5), site_job("2", std::nullopt)}, kEnd), 2U);
  }
  struct stat st {};
  ASSERT_EQ(stat(path().c_str(), &st), 0);
  const mode_t mask = umask(0);
  umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0640 & ~mask) << "0640 under the umask";

  auto db = AccountingDb::open_for_reading(path());
  EXPECT_EQ(db.covered_until_ms(), kEnd);
  JobQuery q;
  q.gpu_rows = true;
  const auto jobs = db.jobs(q);
  ASSERT_EQ(jobs.size(), 2U);
  const SiteJob want = site_job("1", 0.5);
  const SiteJob& got = jobs[0];
  EXPECT_EQ(got.id, "1");
  EXPECT_EQ(got.shown_id, "1_1");
  EXPECT_EQ(got.name, want.name);
  EXPECT_EQ(got.exit_code, 0);
  EXPECT_EQ(got.start_ms, want.start_ms);
  EXPECT_EQ(got.end_ms, want.end_ms);
  EXPECT_EQ(got.nodes, want.nodes);
  EXPECT_EQ(got.gpus, 2);
  EXPECT_EQ(got.gpu_model, "h100");
  EXPECT_EQ(got.idle_gpu_hours, 0.5);
  EXPECT_EQ(got.util_pct, 60);
  EXPECT_FALSE(got.sm_active_pct);
  EXPECT_EQ(got.co2_g, 950);
  EXPECT_EQ(got.flags, want.flags);
  EXPECT_EQ(got.notes, want.notes);
  EXPECT_EQ(got.source, JobSource::Tsdb);
  ASSERT_EQ(got.gpu_rows.size(), 1U);
  EXPECT_EQ(got.gpu_rows[0].key, "GPU-1");
  EXPECT_EQ(got.gpu_rows[0].index, 0U);
  EXPECT_EQ(got.gpu_rows[0].samples, 480);
  EXPECT_EQ(got.gpu_rows[0].energy_source, EnergySource::Counter);
  EXPECT_FALSE(got.gpu_rows[0].mig_profile);
  EXPECT_EQ(got.gpu_rows[0].health_faults, 1);
  EXPECT_EQ(jobs[1].source, JobSource::None);
  EXPECT_TRUE(jobs[1].notes.empty());
  EXPECT_TRUE(jobs[1].flags.empty());

  const auto updates = db.updates(10);
  ASSERT_EQ(updates.size(), 1U);
  EXPECT_EQ(updates[0].status, "done");
  EXPECT_EQ(updates[0].jobs_added, 2);
  EXPECT_EQ(updates[0].covered_until_ms, kEnd);
  EXPECT_EQ(updates[0].server, "http://tsdb.test:9090");
  EXPECT_TRUE(updates[0].finished_ms);

  auto again = AccountingDb::open_for_update(path());
  EXPECT_EQ(again.count_jobs({}), 2) << "opened for an update, not created anew";
}

TEST_F(AccountingDbTest, OverlappingBatchesAddEachJobOnce) {
  auto db = AccountingDb::open_for_update(path());
  EXPECT_EQ(add(db, {site_job("1", 0.5), site_job("2", 1.0)}, kEnd), 2U);
  SiteJob changed = site_job("2", 3.0);
  changed.gpu_hours = 100;
  EXPECT_EQ(add(db, {changed, site_job("3", 2.0), site_job("3", 2.0)}, kEnd), 1U)
      << "2 is in already, 3 twice in one batch";
  EXPECT_EQ(db.count_jobs({}), 3);
  EXPECT_EQ(sql("SELECT sum(jobs) FROM usage_days"), 3);
  EXPECT_EQ(sql("SELECT sum(gpu_hours) FROM usage_days"), 12);
  EXPECT_EQ(sql("SELECT sum(idle_gpu_hours) FROM usage_days"), 3.5);
  EXPECT_EQ(sql("SELECT count(*) FROM job_gpus"), 3);
  EXPECT_EQ(sql("SELECT idle_gpu_hours FROM jobs WHERE job_id = '2'"), 1.0) << "left as it was";
  const UsageRow total = db.total({});
  EXPECT_EQ(total.jobs, 3);
  EXPECT_EQ(total.gpu_hours, 12);
  const auto updates = db.updates(10);
  ASSERT_EQ(updates.size(), 2U);
  EXPECT_EQ(updates[0].jobs_added, 1) << "newest first";
  EXPECT_EQ(updates[1].jobs_added, 2);
}

TEST_F(AccountingDbTest, TheCoveredTimeMovesOnlyForward) {
  auto db = AccountingDb::open_for_update(path());
  const auto update = db.begin_update(0, kEnd, "http://tsdb.test");
  EXPECT_FALSE(db.covered_until_ms()) << "an update that began covers nothing yet";
  db.add_jobs(std::vector<SiteJob>{}, 1000, update, 475);
  EXPECT_EQ(db.covered_until_ms(), 1000) << "an empty batch covers its time too";
  db.add_jobs(std::vector<SiteJob>{}, 500, update, 475);
  EXPECT_EQ(db.covered_until_ms(), 1000);
  db.finish_update(update, "failed", "the server went away");
  EXPECT_EQ(db.covered_until_ms(), 1000) << "a failed update keeps what it covered";
  EXPECT_EQ(db.updates(1)[0].message, "the server went away");
}

TEST_F(AccountingDbTest, ABatchThatFailsLeavesTheFileAsItWas) {
  FullDisk disk;
  auto db = AccountingDb::open_for_update(path());
  ASSERT_EQ(add(db, {site_job("1", 0.5)}, kEnd), 1U);
  const auto update = db.begin_update(kEnd, kEnd + kHour, "http://tsdb.test");
  std::vector<SiteJob> batch;
  for (int i = 2; i < 200; ++i) batch.push_back(site_job(std::to_string(i), 0.25 * i));
  disk.fill();
  const std::string message = error_of([&] { db.add_jobs(batch, kEnd + kHour, update, 475); });
  disk.free_space();
  EXPECT_NE(message.find("cannot add jobs to the accounting database " + path()), std::string::npos)
      << message;
  EXPECT_NE(message.find("full"), std::string::npos) << message;
  EXPECT_NE(message.find("nothing of this batch was written"), std::string::npos) << message;

  EXPECT_EQ(db.count_jobs({}), 1);
  EXPECT_EQ(db.covered_until_ms(), kEnd);
  EXPECT_EQ(sql("SELECT sum(jobs) FROM usage_days"), 1);
  EXPECT_EQ(sql("SELECT count(*) FROM job_gpus"), 1);
  EXPECT_EQ(sql("SELECT jobs_added FROM updates WHERE id = " + std::to_string(update)), 0);

  // The next attempt adds the whole batch, once.
  EXPECT_EQ(db.add_jobs(batch, kEnd + kHour, update, 475), batch.size());
  EXPECT_EQ(db.covered_until_ms(), kEnd + kHour);
  auto reader = AccountingDb::open_for_reading(path());
  EXPECT_EQ(reader.count_jobs({}), 199);
  EXPECT_EQ(sql("SELECT sum(jobs) FROM usage_days"), 199);
}

TEST_F(AccountingDbTest, FilesItCannotReadAreRefusedInWords) {
  EXPECT_NE(error_of([&] {
              AccountingDb::open_for_reading(path());
            }).find("there is no accounting database " + path()),
            std::string::npos);
  EXPECT_FALSE(std::ifstream(path()).good()) << "reading never creates it";

  std::ofstream(dir_.file("notes.txt")) << "not a database at all, but long enough to be read\n";
  const std::string text =
      error_of([&] { AccountingDb::open_for_reading(dir_.file("notes.txt")); });
  EXPECT_NE(text.find("cannot read the accounting database"), std::string::npos) << text;
  EXPECT_NE(text.find("not a database"), std::string::npos) << text;

  Database(dir_.file("other.db"), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
      .exec("CREATE TABLE samples(t INTEGER)");
  for (const auto& open : {+[](const std::string& p) { AccountingDb::open_for_reading(p); },
                           +[](const std::string& p) { AccountingDb::open_for_update(p); }}) {
    const std::string other = error_of([&] { open(dir_.file("other.db")); });
    EXPECT_NE(other.find("other.db is not a gpuscope accounting database"), std::string::npos)
        << other;
  }
  { auto db = AccountingDb::open_for_update(path()); }
  run_sql(path(), "UPDATE meta SET value = '2' WHERE key = 'accounting_schema'");
  const std::string newer = error_of([&] { AccountingDb::open_for_reading(path()); });
  EXPECT_NE(newer.find("is of accounting schema 2, newer than this gpuscope's 1"),
            std::string::npos)
      << newer;
  EXPECT_NE(error_of([&] { AccountingDb::open_for_update(path()); }).find("schema 2"),
            std::string::npos);
}

TEST_F(AccountingDbTest, AUserWhoMayNotReadIsToldWhoMay) {
  if (geteuid() == 0) GTEST_SKIP() << "root may read every file";
  { auto db = AccountingDb::open_for_update(path()); }
  ASSERT_EQ(chmod(path().c_str(), 0200), 0);
  const std::string message = error_of([&] { AccountingDb::open_for_reading(path()); });
  EXPECT_NE(message.find("you may not read the accounting database"), std::string::npos) << message;
  EXPECT_NE(message.find("mode 0200"), std::string::npos) << message;
}

TEST_F(AccountingDbTest, JobsMostIdleFirstThenWithoutFiguresAndTheirFilters) {
  auto db = AccountingDb::open_for_update(path());
  std::vector<SiteJob> jobs = {site_job("a", 1.0), site_job("b", 5.0), site_job("c", std::nullopt),
                               site_job("d", 3.0), site_job("e", std::nullopt, kEnd + kHour)};
  jobs[1].user = "bob";
  jobs[2].account = "chemistry";
  jobs[3].partition = "debug";
  jobs[3].state = "FAILED";
  jobs[0].end_ms = kEnd - kHour;
  add(db, jobs, kEnd + kHour);
  const auto ids = [&](const JobQuery& q) {
    std::string out;
    for (const auto& j : db.jobs(q)) out += j.id;
    return out;
  };
  EXPECT_EQ(ids({}), "bdaec") << "idle GPU-hours down, then the jobs without, latest first";
  JobQuery q;
  q.limit = 2;
  EXPECT_EQ(ids(q), "bd");
  EXPECT_EQ(db.count_jobs(q), 5) << "the count is not limited";
  q = {};
  q.users = {"bob"};
  EXPECT_EQ(ids(q), "b");
  q = {};
  q.accounts = {"chemistry", "nobody"};
  EXPECT_EQ(ids(q), "c");
  q = {};
  q.partitions = {"debug"};
  EXPECT_EQ(ids(q), "d");
  q = {};
  q.states = {"COMPLETED"};
  EXPECT_EQ(ids(q), "baec");
  EXPECT_EQ(db.count_jobs(q), 4);
  q = {};
  q.job_ids = {"e", "a"};
  EXPECT_EQ(ids(q), "ae");
  q = {};
  q.from_ms = kEnd;  // ends in [from, to)
  q.to_ms = kEnd + kHour;
  EXPECT_EQ(ids(q), "bdc");
  EXPECT_EQ(db.count_jobs(q), 3);
}

}  // namespace
}  // namespace gpuscope::store
