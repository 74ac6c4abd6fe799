// A full disk (SQLite's writes failing with SQLITE_FULL, tests/support/full_disk.hpp) never
// reaches the sampler: rows wait in memory, are retried, and what could not be written is
// reported in words.
#include <gtest/gtest.h>

#include "store/run_reader.hpp"
#include "store/run_writer.hpp"
#include "store_test_data.hpp"
#include "support/full_disk.hpp"
#include "support/process.hpp"

namespace gpuscope::store {
namespace {

using gpuscope::testing::FullDisk;
using gpuscope::testing::TempDir;
using namespace store::testing;

WriterOptions full_disk() {
  WriterOptions options;
  options.flush_interval = std::chrono::hours(1);  // only explicit flushes
  return options;
}

TEST(DiskFull, RowsAreKeptAndWrittenWhenSpaceReturns) {
  FullDisk disk;
  TempDir dir;
  const auto path = dir.file("run.db");
  auto writer = RunWriter::create(path, false, make_run(), make_devices(2), full_disk());
  disk.fill();
  for (int seq = 0; seq < 1000; ++seq) writer->push(make_sample(seq % 2 == 0 ? 0U : 1U, seq));
  writer->flush();

  auto stats = writer->stats();
  EXPECT_EQ(stats.rows_written, 0);
  EXPECT_GE(stats.failed_flushes, 1);
  EXPECT_EQ(stats.last_error, "database or disk is full");
  EXPECT_EQ(stats.rows_pending, 1001) << "1000 samples and the write_error event";
  EXPECT_EQ(stats.rows_dropped, 0);

  writer->push(make_sample(0, 1000));
  disk.free_space();
  writer->flush();
  stats = writer->stats();
  EXPECT_EQ(stats.written.samples, 1001);
  EXPECT_EQ(stats.written.events, 1);
  EXPECT_EQ(stats.rows_pending, 0);
  EXPECT_EQ(stats.rows_dropped, 0);

  const auto problems = writer->finish(RunEnd{});
  ASSERT_EQ(problems.size(), 1U);
  EXPECT_NE(problems[0].find("every row was written on a later attempt"), std::string::npos)
      << problems[0];

  auto reader = RunReader::open(path);
  EXPECT_EQ(reader.count_samples(), 1001);
  auto events = reader.events();
  RunEvent event;
  ASSERT_TRUE(events.next(event));
  EXPECT_EQ(event.event.kind.text(), "write_error");
  const auto run = reader.runs().at(0);
  EXPECT_EQ(run.end.status, RunStatus::Finished);
  EXPECT_EQ(run.end.problems, problems);
}

TEST(DiskFull, DropsTheOldestPastTheMemoryBoundAndSaysSo) {
  FullDisk disk;
  TempDir dir;
  const auto path = dir.file("run.db");
  auto options = full_disk();
  options.max_pending_bytes = 100 * sizeof(SampleRow);
  auto writer = RunWriter::create(path, false, make_run(), make_devices(1), options);
  disk.fill();
  for (int seq = 0; seq < 1000; ++seq) writer->push(make_sample(0, seq));
  writer->flush();
  auto stats = writer->stats();
  EXPECT_GE(stats.dropped.samples, 900);
  EXPECT_LE(stats.rows_pending, 100);
  EXPECT_EQ(stats.dropped.samples + stats.rows_pending, 1001);

  // Space comes back: the newest rows, those kept, are written in order.
  disk.free_space();
  writer->flush();
  const auto kept = writer->stats().written.samples;
  EXPECT_GT(kept, 0);
  const auto problems = writer->finish(RunEnd{});
  ASSERT_EQ(problems.size(), 1U);
  EXPECT_EQ(problems[0], std::to_string(1000 - kept) +
                             " samples could not be written: database or disk is full");

  auto reader = RunReader::open(path);
  auto cursor = reader.samples();
  RunSample sample;
  std::int64_t seq = 1000 - kept;
  while (cursor.next(sample)) {
    EXPECT_EQ(sample.row.get(Metric::EnergyMj), make_sample(0, seq).get(Metric::EnergyMj));
    ++seq;
  }
  EXPECT_EQ(seq, 1000);
  EXPECT_EQ(reader.runs().at(0).end.problems, problems);
}

TEST(DiskFull, RowsStillUnwritableAtFinishAreReported) {
  FullDisk disk;
  TempDir dir;
  auto writer =
      RunWriter::create(dir.file("run.db"), false, make_run(), make_devices(1), full_disk());
  disk.fill();
  for (int seq = 0; seq < 1234; ++seq) writer->push(make_sample(0, seq));
  writer->push(PowerRow{0, 1, 2, 100.0, 101.0, 5.0});
  const auto problems = writer->finish(RunEnd{});
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems[0],
            "1234 samples, 1 power sample and 1 event could not be written: database or disk "
            "is full");
  EXPECT_EQ(writer->stats().rows_dropped, 1236);
  EXPECT_EQ(RunReader::open(dir.file("run.db")).count_samples(), 0);
}

}  // namespace
}  // namespace gpuscope::store
