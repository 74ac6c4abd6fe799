// Opening run databases: the clear refusals, and reading one that is still being written.
#include "store/run_reader.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "core/error.hpp"
#include "store/run_writer.hpp"
#include "store/sqlite.hpp"
#include "store_test_data.hpp"
#include "support/process.hpp"

namespace gpuscope::store {
namespace {

using gpuscope::testing::TempDir;
using namespace store::testing;

// The Error RunReader::open throws for `path` (fails the test when it opens).
Error open_error(const std::string& path) {
  try {
    RunReader::open(path);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << path << " opened";
  return Error("");
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

}  // namespace
}  // namespace gpuscope::store
