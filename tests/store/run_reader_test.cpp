// Opening run databases: the clear refusals, and reading one that is still being written; the
// bound on one step's work on a file gpuscope did not write.
#include "store/run_reader.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <functional>

#include "core/error.hpp"
#include "store/foreign_sqlite.hpp"
#include "store/run_writer.hpp"
#include "store/sqlite.hpp"
#include "store_test_data.hpp"
#include "support/process.hpp"
#include "support/refusal.hpp"

namespace gpuscope::store {
namespace {

using gpuscope::testing::TempDir;
using namespace store::testing;

// The Error RunReader::open throws for `path` (fails the test when it opens).
Error open_error(const std::string& path) {
  SCOPED_TRACE(path);
  return gpuscope::testing::refusal([&] { RunReader::open(path); });
}

TEST(RunReader, RefusesAMissingFile) {
  TempDir dir;
  const auto e = open_error(dir.file("nope.db"));
  EXPECT_EQ(e.summary(), dir.file("nope.db") + " does not exist");
  EXPECT_EQ(e.exit_code(), 2);
}

TEST(RunReader, RefusesAFileThatIsNotSqlite) {
  TempDir dir;
  const auto path = dir.file("x.db");
  { std::ofstream(path) << "time,power\n0,100\n1,200\n" << std::string(4096, 'z'); }
  const auto e = open_error(path);
  EXPECT_EQ(e.summary(), path + " is not a SQLite database");
  EXPECT_EQ(e.exit_code(), 2);
}

TEST(RunReader, RefusesAnEmptyFile) {
  TempDir dir;
  const auto path = dir.file("x.db");
  { std::ofstream{path}; }
  const auto e = open_error(path);
  EXPECT_EQ(e.summary(), path + " is not a gpuscope run database");
  EXPECT_EQ(e.reason(), "it is empty");
}

TEST(RunReader, RefusesAnotherApplicationsDatabase) {
  TempDir dir;
  const auto path = dir.file("x.db");
  {
    Database db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    db.exec("PRAGMA application_id = 1234; CREATE TABLE t (a); INSERT INTO t VALUES (1);");
  }
  const auto e = open_error(path);
  EXPECT_EQ(e.summary(), path + " is not a gpuscope run database");
  EXPECT_EQ(e.reason(), "application_id 0x4d2, expected 0x47505553");
}

TEST(RunReader, RefusesANewerSchema) {
  TempDir dir;
  const auto path = dir.file("x.db");
  RunWriter::create(path, false, make_run(), {})->finish(RunEnd{});
  {
    Database db(path, SQLITE_OPEN_READWRITE);
    db.exec("PRAGMA user_version = 2");
  }
  const auto e = open_error(path);
  EXPECT_EQ(std::string(e.what()), path +
                                       " was written by a newer gpuscope (schema 2, this "
                                       "gpuscope reads up to 1); upgrade gpuscope");
}

TEST(RunReader, ReadsADatabaseWhileItIsWritten) {
  TempDir dir;
  const auto path = dir.file("run.db");
  WriterOptions options;
  options.flush_interval = std::chrono::hours(1);  // only explicit flushes
  auto writer = RunWriter::create(path, false, make_run(), make_devices(2), options);
  for (int seq = 0; seq < 50; ++seq) writer->push(make_sample(seq % 2 == 0 ? 0U : 1U, seq));
  writer->flush();

  auto reader = RunReader::open(path);
  EXPECT_EQ(reader.runs().at(0).end.status, RunStatus::Running);
  EXPECT_EQ(reader.count_samples(), 50);

  // A cursor sees the snapshot it started with; the writer is not blocked by it.
  auto cursor = reader.samples({std::nullopt, 1U});
  RunSample first;
  ASSERT_TRUE(cursor.next(first));
  for (int seq = 50; seq < 80; ++seq) writer->push(make_sample(0, seq));
  writer->flush();
  EXPECT_EQ(writer->stats().rows_written, 80);
  EXPECT_EQ(writer->stats().failed_flushes, 0);
  std::int64_t seen = 1;
  while (cursor.next(first)) ++seen;
  EXPECT_EQ(seen, 25);

  EXPECT_EQ(reader.count_samples(), 80) << "a new query sees the new rows";
  EXPECT_TRUE(writer->finish(RunEnd{}).empty()) << "finishing with a reader attached is fine";
  EXPECT_EQ(reader.runs().at(0).end.status, RunStatus::Finished);
  EXPECT_EQ(RunReader::open(path).count_samples({std::nullopt, 0U}), 55);
}

TEST(RunReader, CursorOutlivesTheReader) {
  TempDir dir;
  const auto path = dir.file("run.db");
  auto writer = RunWriter::create(path, false, make_run(), make_devices(1));
  writer->push(make_sample(0, 1));
  writer->finish(RunEnd{});
  auto cursor = RunReader::open(path).samples();
  RunSample sample;
  ASSERT_TRUE(cursor.next(sample));
  EXPECT_EQ(sample.row.get(Metric::EnergyMj), 1'234'567'890'124.0);
}

TEST(RunReader, FinishedDatabaseIsASingleFile) {
  TempDir dir;
  const auto path = dir.file("run.db");
  auto writer = RunWriter::create(path, false, make_run(), make_devices(1));
  writer->push(make_sample(0, 1));
  writer->finish(RunEnd{});
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  Database db(path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(db.query_int("PRAGMA application_id"), 0x47505553);
  Statement check = db.prepare("PRAGMA integrity_check");
  ASSERT_TRUE(check.step());
  EXPECT_EQ(check.text(0), "ok");
  Statement mode = db.prepare("PRAGMA journal_mode");
  ASSERT_TRUE(mode.step());
  EXPECT_EQ(mode.text(0), "delete");
}

// Runs `work` in a child process and returns its exit status, or -1 when it still runs after
// `seconds` (it is then killed): a query that never ends fails the test instead of hanging it.
int exit_status_within(int seconds, const std::function<int()>& work) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(work());
  for (int waited_ms = 0; waited_ms < seconds * 1000; waited_ms += 20) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
    ::usleep(20'000);
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return -1;
}

// 0 when `e` is the bound's stop, else 3.
int stopped_for_its_work(const std::exception& e) {
  return std::string(e.what()).find("a step of a query was stopped after") == 0 ? 0 : 3;
}

// SQLite's memory statistics take one process-wide mutex at every allocation it makes, which
// the analysis' reading threads then wait on: gpuscope turns them off before SQLite starts, so
// SQLite counts nothing (docs/performance.md).
TEST(Database, SqliteKeepsNoMemoryStatistics) {
  TempDir dir;
  Database db(dir.file("stats.db"), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  db.exec("CREATE TABLE t (x BLOB); INSERT INTO t VALUES (zeroblob(100000));");
  sqlite3_int64 used = -1, highest = -1;
  ASSERT_EQ(sqlite3_status64(SQLITE_STATUS_MEMORY_USED, &used, &highest, 0), SQLITE_OK);
  EXPECT_EQ(used, 0);
  EXPECT_EQ(highest, 0);
}

TEST(StepBudget, AQueryOfEndlessWorkStopsWithTheReason) {
  TempDir dir;
  const auto path = dir.file("endless.db");
  {
    Database db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    db.exec(
        "CREATE VIEW endless AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
        "SELECT i FROM n WHERE i % 7 = 9");
  }
  // A foreign file (ingest's readers: gssr and Nsight Systems exports).
  EXPECT_EQ(exit_status_within(60,
                               [&] {
                                 try {
                                   const ForeignDatabase db(path);
                                   ForeignRows rows = db.query("SELECT count(*) FROM endless");
                                   rows.next();
                                 } catch (const ForeignSqliteError& e) {
                                   return stopped_for_its_work(e);
                                 }
                                 return 4;
                               }),
            0);
  // Any connection bounded by a file's size, through a statement and through exec.
  for (const bool exec : {false, true}) {
    EXPECT_EQ(exit_status_within(60,
                                 [&] {
                                   Database db(path, SQLITE_OPEN_READONLY);
                                   db.limit_steps(path);
                                   try {
                                     if (exec) db.exec("SELECT count(*) FROM endless");
                                     if (!exec) db.query_int("SELECT count(*) FROM endless");
                                   } catch (const SqliteError& e) {
                                     return e.code() == SQLITE_INTERRUPT ? stopped_for_its_work(e)
                                                                         : 5;
                                   }
                                   return 4;
                                 }),
              0)
        << (exec ? "exec" : "statement");
  }
}

TEST(StepBudget, EachStepHasItsOwnBound) {
  // Steps that each do little never add up to a stop: 15 million rows, more work in all than
  // the bound of one step on this small file.
  TempDir dir;
  const auto path = dir.file("rows.db");
  Database(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE).exec("CREATE TABLE t (x)");
  Database db(path, SQLITE_OPEN_READONLY);
  db.limit_steps(path);
  Statement rows = db.prepare(
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 15000000) "
      "SELECT i FROM n");
  std::int64_t count = 0;
  while (rows.step()) ++count;
  EXPECT_EQ(count, 15'000'000);
}

}  // namespace
}  // namespace gpuscope::store
