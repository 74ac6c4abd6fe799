// `gpuscope analyze` reads sample_chunks where a database has them and rows elsewhere: its output
// must not depend on which. The same runs are analysed through the real binary with every chunk,
// with the last chunks missing (what kill -9 leaves: a tail read from rows), and with none (a
// schema 1.0 file), and the JSON compared byte for byte; with NULL metrics, a merged file and a
// GPU whose chunks cannot be used.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "store/merge.hpp"
#include "store/run_writer.hpp"
#include "store/sqlite.hpp"
#include "support/process.hpp"

namespace gpuscope {
namespace {

using testing::TempDir;

RunInfo rank_run(int rank) {
  RunInfo run;
  run.command = {"python", "train.py"};
  run.host = "node" + std::to_string(rank);
  run.user = "test";
  run.start_wall_ns = 1'767'225'600'000'000'000 + rank * 40'000'000LL;
  run.start_mono_ns = 9'000'000'000 + rank * 1'000'000LL;
  run.tool_version = "test";
  run.sampling_interval_ns = 100'000'000;
  run.slurm.job_id = "77";
  run.slurm.step_id = "0";
  run.slurm.rank = rank;
  return run;
}

std::vector<DeviceDescription> devices(unsigned count) {
  std::vector<DeviceDescription> out(count);
  for (unsigned i = 0; i < count; ++i) {
    out[i].index = i;
    out[i].name = "NVIDIA H100 80GB HBM3";
    out[i].uuid = "GPU-test-" + std::to_string(i);
  }
  return out;
}

// A tick of GPU `gpu`: idle for 20 s, then steps; GPU 2 is a straggler; GPU 1 has no GPM metrics
// (activity from utilization, no score); power_average_w is NULL every 5th tick; module power is
// never there; values are noisy doubles and quantised integers like NVML's.
SampleRow tick(int rank, unsigned gpu, std::int64_t k) {
  SampleRow row;
  const RunInfo run = rank_run(rank);
  row.device_index = gpu;
  row.wall_ns = run.start_wall_ns + k * 100'000'000 + gpu * 15'000;
  row.mono_ns = run.start_mono_ns + k * 100'000'000 + gpu * 15'000;
  const double t = static_cast<double>(k) * 0.1;
  const bool busy = t > 20;
  const double wobble = std::sin(static_cast<double>(k * (gpu + 3) + rank));
  const double level = gpu == 2 ? 0.55 : 1.0;
  const double sm = busy ? std::clamp(80 * level + 7 * wobble, 0.0, 100.0) : 0.0;
  row.set(Metric::PowerW, std::round((90 + (busy ? 450 * level : 0) + 20 * wobble) * 1000) / 1000);
  if (k % 5 != 0) row.set(Metric::PowerAverageW, std::round((300 + 50 * wobble) * 1000) / 1000);
  row.set(Metric::PowerInstantW, 100 + 400 * level * (busy ? 1 : 0) + 33.3 * wobble);
  row.set(Metric::EnergyMj, 5e9 + static_cast<double>(k) * (busy ? 50'000 : 9'000));
  row.set(Metric::PowerLimitW, 700);
  row.set(Metric::GpuUtilPct, busy ? std::round(95 * level) : 0);
  row.set(Metric::SmClockMhz, busy ? 1980 : 345);
  row.set(Metric::TemperatureC, std::round(40 + 20 * level + 3 * wobble));
  row.set(Metric::MemoryUsedBytes, busy ? 7.1e10 + 1e6 * std::round(100 * wobble) : 5.2e8);
  row.set(Metric::ClockEventReasons, busy ? (k % 50 < 5 ? 4 : 0) : 1);
  if (gpu != 1) {
    row.set(Metric::SmActivePct, sm);
    row.set(Metric::SmOccupancyPct, busy ? 40 * level + wobble : 0);
    row.set(Metric::TensorActivePct, busy ? 50 * level + 2 * wobble : 0);
    row.set(Metric::Fp64ActivePct, 0);
    row.set(Metric::Fp32ActivePct, busy ? 8 + wobble : 0);
    row.set(Metric::Fp16ActivePct, busy ? 12 * level : 0);
    row.set(Metric::DramActivePct, busy ? 35 + 4 * wobble : 0);
  }
  return row;
}

void write_rank(const std::string& path, int rank, std::int64_t ticks) {
  auto writer = store::RunWriter::create(path, true, rank_run(rank), devices(3));
  for (std::int64_t k = 0; k < ticks; ++k) {
    for (unsigned gpu = 0; gpu < 3; ++gpu) writer->push(tick(rank, gpu, k));
  }
  RunEnd end;
  end.end_wall_ns = rank_run(rank).start_wall_ns + ticks * 100'000'000;
  end.samples_taken = ticks;
  ASSERT_TRUE(writer->finish(end).empty());
}

std::string analyze_json(const std::string& db, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"analyze", "--json", db};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = testing::run_gpuscope(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

void sql(const std::string& db, const std::string& statement) {
  store::Database connection(db, SQLITE_OPEN_READWRITE);
  connection.exec(statement);
}

std::int64_t chunk_count(const std::string& db) {
  store::Database connection(db, SQLITE_OPEN_READONLY);
  return connection.query_int("SELECT count(*) FROM sample_chunks").value_or(-1);
}

TEST(AnalyzeFromChunks, SameJsonFromChunksFromATailOfRowsAndFromRowsOnly) {
  TempDir dir;
  const std::string db = dir.file("run.db");
  write_rank(db, 0, 2600);  // 2 full chunks and a partial one per GPU
  ASSERT_EQ(chunk_count(db), 9);
  const std::string from_chunks = analyze_json(db);
  ASSERT_NE(from_chunks.find("\"gpus\""), std::string::npos);
  ASSERT_NE(from_chunks.find("\"stragglers\""), std::string::npos);
  const std::string by_gpu = analyze_json(db, {"--aggregate", "all"});

  // A tail: GPU 0 lost its last chunk, GPU 2 its last two (rows only after the first).
  sql(db,
      "DELETE FROM sample_chunks WHERE rowid IN (SELECT rowid FROM sample_chunks WHERE "
      "device_index = 0 ORDER BY first_mono_ns DESC LIMIT 1) OR rowid IN (SELECT rowid FROM "
      "sample_chunks WHERE device_index = 2 ORDER BY first_mono_ns DESC LIMIT 2)");
  ASSERT_EQ(chunk_count(db), 6);
  EXPECT_EQ(analyze_json(db), from_chunks);

  // GPU 1's chunks disagree with its rows (a row they lack): its rows are read instead.
  sql(db,
      "INSERT INTO samples (run_id, device_index, wall_ns, mono_ns) SELECT run_id, "
      "device_index, wall_ns, mono_ns + 1 FROM samples WHERE device_index = 1 ORDER BY mono_ns "
      "LIMIT 1 OFFSET 1500");
  const std::string with_extra_row = analyze_json(db);
  sql(db, "DELETE FROM sample_chunks");
  EXPECT_EQ(analyze_json(db), with_extra_row);
  sql(db, "DELETE FROM samples WHERE device_index = 1 AND mono_ns % 1000 = 1");

  // No chunks at all (a schema 1.0 file): rows only.
  EXPECT_EQ(analyze_json(db), from_chunks);
  EXPECT_EQ(analyze_json(db, {"--aggregate", "all"}), by_gpu);
}

TEST(AnalyzeFromChunks, MergedRanksGiveTheSameJsonFromChunksAndFromRows) {
  TempDir dir;
  const std::string rank0 = dir.file("rank0.db"), rank1 = dir.file("rank1.db");
  write_rank(rank0, 0, 1100);
  write_rank(rank1, 1, 1300);
  sql(rank1, "DELETE FROM sample_chunks WHERE device_index = 0");  // merge rebuilds these
  const std::string merged = dir.file("job.db");
  store::merge(merged, {rank0, rank1}, false);
  ASSERT_EQ(chunk_count(merged), 12);
  const std::string from_chunks = analyze_json(merged, {"--aggregate", "all"});
  ASSERT_NE(from_chunks.find("node1"), std::string::npos);
  sql(merged, "DELETE FROM sample_chunks");
  EXPECT_EQ(analyze_json(merged, {"--aggregate", "all"}), from_chunks);
}

}  // namespace
}  // namespace gpuscope
