// kill -9 of a writing gpuscope leaves a readable database holding every committed row.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include "store/run_reader.hpp"
#include "store/sqlite.hpp"
#include "support/process.hpp"

namespace gpuscope::store {
namespace {

using gpuscope::testing::TempDir;

struct Child {
  pid_t pid = -1;
  FILE* out = nullptr;
};

Child start_writer(const std::string& db, int flush_ms, int burst = 1) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    const std::string ms = std::to_string(flush_ms);
    const std::string ticks = std::to_string(burst);
    execl(GPUSCOPE_TEST_CRASH_WRITER, GPUSCOPE_TEST_CRASH_WRITER, db.c_str(), ms.c_str(),
          ticks.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(pipe_fds[1]);
  return {pid, fdopen(pipe_fds[0], "r")};
}

TEST(CrashSafety, KillNineKeepsEveryCommittedRow) {
  TempDir dir;
  const auto path = dir.file("run.db");
  Child child = start_writer(path, 1000);
  ASSERT_GT(child.pid, 0);
  ASSERT_NE(child.out, nullptr);

  // Wait for the second committed flush (~2 s), then kill half an interval later (~2.5 s).
  long flushes = 0;
  long committed_rows = 0;
  long pushed_rows = 0;
  char line[128];
  while (flushes < 2 && std::fgets(line, sizeof line, child.out) != nullptr) {
    std::istringstream(line) >> flushes >> committed_rows >> pushed_rows;
  }
  ASSERT_GE(flushes, 2) << "the writer stopped reporting before its second flush";
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSERT_EQ(kill(child.pid, SIGKILL), 0);
  int status = 0;
  waitpid(child.pid, &status, 0);
  std::fclose(child.out);
  ASSERT_TRUE(WIFSIGNALED(status));

  auto reader = RunReader::open(path);
  const auto runs = reader.runs();
  ASSERT_EQ(runs.size(), 1U);
  EXPECT_EQ(runs[0].end.status, RunStatus::Running) << "the end was never recorded";
  EXPECT_EQ(reader.devices(runs[0].run_id).size(), 8U);

  // Every row committed before the report survived; rows per GPU form an unbroken prefix
  // (a transaction is all or nothing).
  // A flush may fall between two GPUs of one tick, so their counts differ by at most one.
  const std::int64_t stored = reader.count_samples();
  EXPECT_GE(stored, committed_rows);
  std::int64_t total = 0;
  for (unsigned device = 0; device < 8; ++device) {
    std::int64_t expected_seq = 0;
    reader.for_each_sample({std::nullopt, device}, [&](const RunSample& s) {
      EXPECT_EQ(*s.row.get(Metric::EnergyMj),
                1'234'567'890'123.0 + static_cast<double>(expected_seq));
      ++expected_seq;
    });
    EXPECT_LE(std::abs(expected_seq * 8 - stored), 8) << "GPU " << device;
    total += expected_seq;
  }
  EXPECT_EQ(total, stored);
  RecordProperty("rows_committed_before_kill_report", std::to_string(committed_rows));
  RecordProperty("rows_stored", std::to_string(stored));

  // The file and the -wal the killed writer left beside it are sound together.
  Database db(path, SQLITE_OPEN_READONLY);
  Statement check = db.prepare("PRAGMA integrity_check");
  ASSERT_TRUE(check.step());
  EXPECT_EQ(check.text(0), "ok");
}

TEST(CrashSafety, KillNineLeavesChunksAndARowTailThatReadLikeTheRows) {
  TempDir dir;
  const auto path = dir.file("run.db");
  Child child = start_writer(path, 200, 40);
  ASSERT_GT(child.pid, 0);
  ASSERT_NE(child.out, nullptr);

  // Once 3000 ticks per GPU are committed, two chunks per GPU are sealed; the next flush writes
  // them. Kill two flushes later, whenever that is (no timing in the verdict).
  long flushes = 0, committed_rows = 0, pushed_rows = 0;
  long flushes_when_enough = -1;
  char line[128];
  while (std::fgets(line, sizeof line, child.out) != nullptr) {
    std::istringstream(line) >> flushes >> committed_rows >> pushed_rows;
    if (flushes_when_enough < 0 && committed_rows >= 8 * 3000) flushes_when_enough = flushes;
    if (flushes_when_enough >= 0 && flushes >= flushes_when_enough + 2) break;
  }
  ASSERT_GE(flushes_when_enough, 0) << "the writer stopped before committing 3000 ticks";
  ASSERT_EQ(kill(child.pid, SIGKILL), 0);
  int status = 0;
  waitpid(child.pid, &status, 0);
  std::fclose(child.out);
  ASSERT_TRUE(WIFSIGNALED(status));

  auto reader = RunReader::open(path);
  ASSERT_TRUE(reader.has_sample_chunks());
  const std::int64_t run_id = reader.runs().at(0).run_id;
  std::vector<Metric> all;
  for (std::size_t m = 0; m < kMetricCount; ++m) all.push_back(static_cast<Metric>(m));
  std::int64_t from_chunks = 0;
  for (unsigned device = 0; device < 8; ++device) {
    const SamplePlan plan = reader.sample_plan(run_id, device);
    EXPECT_EQ(plan.rows, reader.count_samples({run_id, device}));
    EXPECT_GE(plan.chunk_rows, 2 * static_cast<std::int64_t>(kChunkRows)) << "GPU " << device;
    EXPECT_LE(plan.chunk_rows, plan.rows);
    from_chunks += plan.chunk_rows;
    SampleColumns mixed, rows;
    reader.read_samples(plan, all, mixed);
    reader.read_samples(reader.sample_plan(run_id, device, false), all, rows);
    ASSERT_EQ(mixed.rows(), static_cast<std::size_t>(plan.rows));
    EXPECT_EQ(mixed.wall_ns, rows.wall_ns);
    EXPECT_EQ(mixed.mono_ns, rows.mono_ns);
    for (std::size_t m = 0; m < kMetricCount; ++m) {
      ASSERT_EQ(mixed.values[m].size(), rows.values[m].size());
      if (rows.values[m].empty()) continue;  // memcmp must not be handed an empty vector's null
      EXPECT_EQ(std::memcmp(mixed.values[m].data(), rows.values[m].data(),
                            rows.values[m].size() * sizeof(double)),
                0)
          << kMetrics[m].name << " of GPU " << device;
    }
  }
  RecordProperty("rows_from_chunks", std::to_string(from_chunks));
  RecordProperty("rows_stored", std::to_string(reader.count_samples()));
}

}  // namespace
}  // namespace gpuscope::store
