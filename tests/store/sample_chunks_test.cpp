// sample_chunks, the columnar copy of samples (schema 1.1): the encodings round-trip bit for bit,
// and reading a GPU through chunks gives exactly what reading its rows gives, also with NULL
// metrics, a tail of rows the chunks do not cover, broken chunks, 1.0 files and merged files;
// and sample_counts (1.13), the writer's row counts, which readers check and a change drops.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "store/chunk_io.hpp"
#include "store/merge.hpp"
#include "store/run_reader.hpp"
#include "store/run_writer.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store_test_data.hpp"
#include "support/older_schema.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::store {
namespace {

using gpuscope::testing::TempDir;
using testing::make_devices;
using testing::make_run;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::uint64_t bits(double v) {
  return std::bit_cast<std::uint64_t>(v);
}

// Decodes what encode_values() made of `values` and checks every bit (NaN as NULL).
void expect_round_trip(const std::vector<double>& values, int expected_format = -1) {
  const Blob blob = encode_values(values);
  if (expected_format >= 0) {
    ASSERT_FALSE(blob.empty());
    EXPECT_EQ(blob[0], expected_format);
  }
  std::vector<double> back = {42.0};  // decoding appends
  ASSERT_TRUE(decode_values(blob, values.size(), back));
  ASSERT_EQ(back.size(), values.size() + 1);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) {
      EXPECT_TRUE(std::isnan(back[i + 1])) << i;
    } else {
      EXPECT_EQ(bits(back[i + 1]), bits(values[i])) << i << ": " << values[i];
    }
  }
}

TEST(ChunkEncoding, ValuesRoundTripBitForBit) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uniform(-1e6, 1e6);
  std::vector<double> doubles(1000), percent(1000), milliwatts(1000), counter(1000);
  for (std::size_t i = 0; i < 1000; ++i) {
    doubles[i] = uniform(rng);
    percent[i] = static_cast<double>(rng() % 101);
    milliwatts[i] = static_cast<double>(rng() % 700000) / 1000.0;
    counter[i] = 1'234'567'890'123.0 + static_cast<double>(i * 70'000 + rng() % 1000);
  }
  expect_round_trip(doubles, 1);
  expect_round_trip(percent, 2);
  expect_round_trip(milliwatts, 2);
  expect_round_trip(counter, 2);
  expect_round_trip({700, 700, 700}, 2);  // constant: header only
  EXPECT_EQ(encode_values(std::vector<double>{700, 700, 700}).size(), 16U);
  expect_round_trip({kNaN, kNaN}, 0);
  expect_round_trip({}, 0);
  // NULLs among integers use the reserved all-ones word, so 255 values need two bytes.
  std::vector<double> with_null(256);
  for (std::size_t i = 0; i < 256; ++i) with_null[i] = static_cast<double>(i);
  with_null[17] = kNaN;
  expect_round_trip(with_null, 2);
  expect_round_trip({-5, 3, kNaN, -1e15, 9e15}, 2);
  expect_round_trip({0.1, 0.2, 0.30000000000000004}, 1);  // the last is not k / 10^d
  const double inf = std::numeric_limits<double>::infinity();
  expect_round_trip({1, inf, -inf, kNaN, std::numeric_limits<double>::denorm_min()}, 1);
  expect_round_trip({9.3e18, -9.3e18, 1e300}, 1);
}

TEST(ChunkEncoding, MalformedBlobsAreRefused) {
  std::vector<double> out;
  const Blob percent = encode_values(std::vector<double>{1, 2, 3});
  EXPECT_FALSE(decode_values(percent, 4, out));  // wrong row count
  EXPECT_FALSE(decode_values(Blob{9, 0, 0}, 1, out));
  Blob bad = percent;
  bad[2] = 7;  // decimals out of range
  EXPECT_FALSE(decode_values(bad, 3, out));
  std::vector<std::int64_t> times;
  EXPECT_FALSE(decode_times(encode_times(std::vector<std::int64_t>{1, 2, 3}), 2, times));
}

TEST(ChunkEncoding, TimesRoundTrip) {
  const std::vector<std::vector<std::int64_t>> cases = {
      {5'000'000'000, 5'100'000'000, 5'200'000'123},          // deltas
      {5'000'000'000, 4'000'000'000, 9'000'000'000'000'000},  // backwards, huge: raw
      {7},
      {1, 1, 1}};
  for (const auto& ns : cases) {
    std::vector<std::int64_t> back;
    ASSERT_TRUE(decode_times(encode_times(ns), ns.size(), back));
    EXPECT_EQ(back, ns);
  }
}

TEST(ChunkEncoding, StoredValuesAreWhatSqliteReturns) {
  const auto energy = static_cast<std::size_t>(Metric::EnergyMj);
  const auto power = static_cast<std::size_t>(Metric::PowerW);
  EXPECT_EQ(stored_sample_value(energy, 12.6), 13.0);  // INTEGER column: rounded
  EXPECT_EQ(bits(stored_sample_value(power, -0.0)), bits(0.0));
  EXPECT_TRUE(std::isnan(stored_sample_value(power, kNaN)));
  EXPECT_EQ(stored_sample_value(power, 12.6), 12.6);
}

std::vector<Metric> all_metrics() {
  std::vector<Metric> out;
  for (std::size_t m = 0; m < kMetricCount; ++m) out.push_back(static_cast<Metric>(m));
  return out;
}

void expect_same(const SampleColumns& a, const SampleColumns& b, const std::string& what) {
  ASSERT_EQ(a.rows(), b.rows()) << what;
  EXPECT_EQ(a.wall_ns, b.wall_ns) << what;
  EXPECT_EQ(a.mono_ns, b.mono_ns) << what;
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    ASSERT_EQ(a.values[m].size(), b.values[m].size()) << what << " " << kMetrics[m].name;
    if (a.values[m].empty()) continue;  // memcmp must not be handed an empty vector's null
    EXPECT_EQ(
        std::memcmp(a.values[m].data(), b.values[m].data(), a.values[m].size() * sizeof(double)), 0)
        << what << " " << kMetrics[m].name;
  }
}

// A sample with NULLs: memory temperature only late on GPU 0, module power every 7th tick, GPM
// metrics on GPU 1 only before tick 1500, a non-integer in an INTEGER column, -0.0 and real zeros.
SampleRow sample(unsigned device, std::int64_t seq) {
  SampleRow row = testing::make_sample(device, seq);
  row.present.reset(static_cast<std::size_t>(Metric::ModulePowerW));
  if (seq % 7 == 0) row.set(Metric::ModulePowerW, 100.0 + static_cast<double>(seq % 13) / 8);
  if (device == 1 && seq >= 1500) {
    for (std::size_t m = static_cast<std::size_t>(Metric::GraphicsActivePct); m < kMetricCount; ++m)
      row.present.reset(m);
  }
  row.set(Metric::SmActivePct, std::fmod(static_cast<double>(seq) * 0.37, 100.0));
  row.set(Metric::PowerInstantW, static_cast<double>(100'000 + seq % 5000) / 1000.0);
  row.set(Metric::PcieTxBytes, 1e9 + static_cast<double>(seq) * 1000.5);  // rounded as INTEGER
  row.set(Metric::TensorActivePct, seq % 3 == 0 ? -0.0 : 0.0);
  // Memory temperature from tick 1100 on GPU 0 (after its first chunk), never on GPU 1.
  if (device == 0 && seq >= 1100)
    row.set(Metric::MemoryTemperatureC, 40.0 + static_cast<double>(seq % 5));
  return row;
}

// A finished run of `devices` GPUs and `ticks` ticks at `path`.
void write_run(const std::string& path, unsigned devices, std::int64_t ticks) {
  auto writer = RunWriter::create(path, true, make_run(), make_devices(devices));
  for (std::int64_t seq = 0; seq < ticks; ++seq) {
    for (unsigned d = 0; d < devices; ++d) writer->push(sample(d, seq));
  }
  RunEnd end;
  end.samples_taken = ticks;
  EXPECT_TRUE(writer->finish(end).empty());
}

// Every GPU of every run read through chunks (as planned) and through rows only.
void expect_chunks_read_like_rows(const std::string& path, bool expect_all_chunked) {
  const auto reader = RunReader::open(path);
  for (const auto& run : reader.runs()) {
    for (const auto& device : reader.devices(run.run_id)) {
      const SamplePlan plan = reader.sample_plan(run.run_id, device.index);
      if (expect_all_chunked) {
        EXPECT_EQ(plan.chunk_rows, plan.rows);
      }
      SampleColumns chunked, rows;
      reader.read_samples(plan, all_metrics(), chunked);
      reader.read_samples(reader.sample_plan(run.run_id, device.index, false), all_metrics(), rows);
      EXPECT_EQ(static_cast<std::int64_t>(rows.rows()), plan.rows);
      expect_same(chunked, rows,
                  "run " + std::to_string(run.run_id) + " GPU " + std::to_string(device.index));
    }
  }
}

TEST(SampleChunks, WriterCoversEveryRowAndReadsLikeTheRows) {
  TempDir dir;
  const auto path = dir.file("run.db");
  write_run(path, 2, 2500);  // two full chunks and a partial one per GPU
  const auto reader = RunReader::open(path);
  EXPECT_TRUE(reader.has_sample_chunks());
  EXPECT_EQ(reader.schema_version(), 1);
  EXPECT_EQ(reader.schema_minor_version(), kSchemaMinorVersion);
  Database db(path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sample_chunks"), 6);
  EXPECT_EQ(db.query_int("SELECT sum(row_count) FROM sample_chunks"), 5000);
  EXPECT_EQ(db.query_int("SELECT max(row_count) FROM sample_chunks"),
            static_cast<std::int64_t>(kChunkRows));
  expect_chunks_read_like_rows(path, true);

  // A metric whose every row is NULL reads as an empty column; one that starts late is NaN
  // until it starts, through chunks and rows alike.
  const auto temperature = static_cast<std::size_t>(Metric::MemoryTemperatureC);
  for (bool chunks : {true, false}) {
    SampleColumns late, never;
    reader.read_samples(reader.sample_plan(1, 0, chunks), all_metrics(), late);
    reader.read_samples(reader.sample_plan(1, 1, chunks), all_metrics(), never);
    EXPECT_TRUE(never.values[temperature].empty()) << chunks;
    ASSERT_EQ(late.values[temperature].size(), 2500U) << chunks;
    EXPECT_TRUE(std::isnan(late.values[temperature][1099])) << chunks;
    EXPECT_EQ(late.values[temperature][1100], 40.0) << chunks;
    EXPECT_EQ(never.values[static_cast<std::size_t>(Metric::SmActivePct)].size(), 2500U);
  }

  // Only the metrics asked for are decoded.
  SampleColumns some;
  const Metric two[] = {Metric::SmActivePct, Metric::GpuUtilPct};
  reader.read_samples(reader.sample_plan(1, 1), two, some);
  EXPECT_EQ(some.rows(), 2500U);
  EXPECT_EQ(some.values[static_cast<std::size_t>(Metric::SmActivePct)].size(), 2500U);
  EXPECT_TRUE(some.values[static_cast<std::size_t>(Metric::PowerW)].empty());
}

TEST(SampleChunks, RowsAfterTheLastChunkAreReadFromTheSamplesTable) {
  TempDir dir;
  const auto path = dir.file("run.db");
  write_run(path, 2, 2500);
  {
    // What a kill -9 leaves: the rows of the last chunk committed, the chunk never written.
    Database db(path, SQLITE_OPEN_READWRITE);
    db.exec(
        "DELETE FROM sample_chunks WHERE rowid IN (SELECT rowid FROM sample_chunks WHERE "
        "device_index = 0 ORDER BY first_mono_ns DESC LIMIT 2)");
  }
  const auto reader = RunReader::open(path);
  const SamplePlan plan = reader.sample_plan(1, 0);
  EXPECT_EQ(plan.rows, 2500);
  EXPECT_EQ(plan.chunk_rows, static_cast<std::int64_t>(kChunkRows));
  EXPECT_EQ(reader.sample_plan(1, 1).chunk_rows, 2500);
  expect_chunks_read_like_rows(path, false);
}

TEST(SampleChunks, ChunksThatDisagreeWithTheRowsAreNotUsed) {
  TempDir dir;
  const auto path = dir.file("run.db");
  write_run(path, 2, 2500);
  {
    Database db(path, SQLITE_OPEN_READWRITE);
    // GPU 0: a hole (its middle chunk gone); GPU 1: a row the chunks lack, inside their span.
    db.exec(
        "DELETE FROM sample_chunks WHERE rowid = (SELECT rowid FROM sample_chunks WHERE "
        "device_index = 0 ORDER BY first_mono_ns LIMIT 1 OFFSET 1)");
    db.exec(
        "INSERT INTO samples (run_id, device_index, wall_ns, mono_ns, power_w) SELECT run_id, "
        "device_index, wall_ns + 1, mono_ns + 1, 1.5 FROM samples WHERE device_index = 1 "
        "ORDER BY mono_ns LIMIT 1 OFFSET 10");
    // A garbled blob is found only when decoding: the reader falls back to rows then.
    db.exec("UPDATE sample_chunks SET power_w = x'0102' WHERE device_index = 1");
  }
  const auto reader = RunReader::open(path);
  EXPECT_EQ(reader.sample_plan(1, 0).chunk_rows, 0);
  EXPECT_EQ(reader.sample_plan(1, 1).chunk_rows, 0);
  expect_chunks_read_like_rows(path, false);
}

TEST(SampleChunks, GarbledChunkFallsBackToRows) {
  TempDir dir;
  const auto path = dir.file("run.db");
  write_run(path, 1, 1500);
  {
    Database db(path, SQLITE_OPEN_READWRITE);
    db.exec("UPDATE sample_chunks SET power_w = x'0102'");
  }
  const auto reader = RunReader::open(path);
  EXPECT_EQ(reader.sample_plan(1, 0).chunk_rows, 1500);  // found only when decoding
  expect_chunks_read_like_rows(path, false);
}

// A file as gpuscope 0.1 wrote it: no sample_chunks, no minor version.
void make_schema_1_0(const std::string& path) {
  gpuscope::testing::downgrade_schema(path, {std::nullopt, {"sample_chunks"}, {}});
}

TEST(SampleChunks, SchemaOneZeroFilesAreReadFromRowsAndMergedIntoChunks) {
  TempDir dir;
  const auto old_path = dir.file("old.db");
  write_run(old_path, 2, 1500);
  make_schema_1_0(old_path);
  {
    const auto reader = RunReader::open(old_path);
    EXPECT_FALSE(reader.has_sample_chunks());
    EXPECT_EQ(reader.schema_minor_version(), 0);
    EXPECT_EQ(reader.sample_plan(1, 0).chunk_rows, 0);
  }
  expect_chunks_read_like_rows(old_path, false);

  // Merge copies a 1.1 input's chunks, builds them for a 1.0 input and for a tail.
  const auto new_path = dir.file("new.db");
  auto writer = RunWriter::create(new_path, true, make_run(1, "node2"), make_devices(2));
  for (std::int64_t seq = 0; seq < 2100; ++seq) {
    for (unsigned d = 0; d < 2; ++d) writer->push(sample(d, seq));
  }
  writer->finish({});
  {
    Database db(new_path, SQLITE_OPEN_READWRITE);
    db.exec(
        "DELETE FROM sample_chunks WHERE rowid = (SELECT max(rowid) FROM sample_chunks WHERE "
        "device_index = 1)");
  }
  const auto merged = dir.file("merged.db");
  const auto summary = merge(merged, {old_path, new_path}, false);
  EXPECT_EQ(summary.runs, 2);
  expect_chunks_read_like_rows(merged, true);
  const auto reader = RunReader::open(merged);
  EXPECT_EQ(reader.schema_minor_version(), kSchemaMinorVersion);
}

TEST(SampleChunks, MigrateAddsTheChunkTable) {
  TempDir dir;
  const auto path = dir.file("old.db");
  write_run(path, 1, 10);
  make_schema_1_0(path);
  {
    Database db(path, SQLITE_OPEN_READWRITE);
    migrate(db, 1);
    EXPECT_TRUE(has_sample_chunks(db));
    EXPECT_EQ(schema_minor_version(db), kSchemaMinorVersion);
  }
  const auto reader = RunReader::open(path);
  EXPECT_EQ(reader.sample_plan(1, 0).chunk_rows, 0);  // empty: everything from rows
  expect_chunks_read_like_rows(path, false);
}

// A file as gpuscope wrote it before 1.12: no columns for AMD's own metrics.
constexpr Metric kAmdMetrics[] = {Metric::UmcActivityPct, Metric::MmActivityPct,
                                  Metric::XgmiReadBytes, Metric::XgmiWriteBytes,
                                  Metric::AmdThrottleStatus};

void make_schema_1_11(const std::string& path) {
  gpuscope::testing::OlderSchema older{11, {}, {}};
  for (Metric m : kAmdMetrics) {
    older.columns.emplace_back("samples", info(m).name);
    older.columns.emplace_back("sample_chunks", info(m).name);
  }
  gpuscope::testing::downgrade_schema(path, older);
}

// Every GPU of every run of `path` read: run `without_amd`'s without the AMD metrics, the others
// with them.
void expect_amd_metrics(const std::string& path, std::int64_t without_amd) {
  const auto reader = RunReader::open(path);
  for (const auto& run : reader.runs()) {
    for (const auto& device : reader.devices(run.run_id)) {
      SampleColumns columns;
      reader.read_samples(reader.sample_plan(run.run_id, device.index), all_metrics(), columns);
      ASSERT_GT(columns.rows(), 0U);
      EXPECT_EQ(columns.values[static_cast<std::size_t>(Metric::PowerW)].size(), columns.rows());
      for (Metric m : kAmdMetrics) {
        const auto& values = columns.values[static_cast<std::size_t>(m)];
        EXPECT_EQ(values.empty(), run.run_id == without_amd) << info(m).name;
      }
    }
  }
}

TEST(SampleChunks, SchemaOneElevenFilesAreReadMergedAndMigratedWithoutAmdMetrics) {
  TempDir dir;
  const auto old_path = dir.file("old.db");
  write_run(old_path, 2, 1500);
  make_schema_1_11(old_path);
  {
    const auto reader = RunReader::open(old_path);
    EXPECT_EQ(reader.schema_minor_version(), 11);
    EXPECT_EQ(reader.sample_plan(1, 0).chunk_rows, 1500);
    // The row cursor too: the AMD metrics absent, the others there.
    auto cursor = reader.samples();
    RunSample row;
    ASSERT_TRUE(cursor.next(row));
    EXPECT_TRUE(row.row.get(Metric::SmActivePct));
    EXPECT_FALSE(row.row.get(Metric::UmcActivityPct));
  }
  expect_chunks_read_like_rows(old_path, false);
  expect_amd_metrics(old_path, 1);

  // Merged with a file of today: the old run's chunks copied with NULL AMD columns.
  const auto new_path = dir.file("new.db");
  auto writer = RunWriter::create(new_path, true, make_run(1, "node2"), make_devices(2));
  for (std::int64_t seq = 0; seq < 1200; ++seq) {
    for (unsigned d = 0; d < 2; ++d) writer->push(sample(d, seq));
  }
  writer->finish({});
  const auto merged = dir.file("merged.db");
  EXPECT_EQ(merge(merged, {old_path, new_path}, false).runs, 2);
  expect_chunks_read_like_rows(merged, true);
  expect_amd_metrics(merged, 1);

  // Migrated in place: the columns added, NULL in the rows and chunks already there.
  {
    Database db(old_path, SQLITE_OPEN_READWRITE);
    migrate(db, 1);
    EXPECT_EQ(schema_minor_version(db), kSchemaMinorVersion);
    EXPECT_EQ(db.query_int("SELECT count(umc_activity_pct) FROM samples").value_or(-1), 0);
    EXPECT_EQ(db.query_int("SELECT count(*) FROM sample_chunks WHERE amd_throttle_status IS NULL")
                  .value_or(-1),
              db.query_int("SELECT count(*) FROM sample_chunks").value_or(-2));
    // 1.13: the counts' table and triggers, with no counts: readers count the rows.
    EXPECT_EQ(db.query_int("SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' AND "
                           "tbl_name = 'samples'"),
              3);
  }
  EXPECT_EQ(RunReader::open(old_path).sample_plan(1, 0).chunk_rows, 1500);
  expect_chunks_read_like_rows(old_path, false);
  expect_amd_metrics(old_path, 1);
}

using Counts = std::vector<std::pair<unsigned, std::int64_t>>;

Counts stored_counts(const std::string& path, std::int64_t run_id) {
  Database db(path, SQLITE_OPEN_READONLY);
  Statement stmt = db.prepare(
      "SELECT device_index, row_count FROM sample_counts WHERE run_id = ? ORDER BY device_index");
  stmt.bind(1, run_id);
  Counts out;
  while (stmt.step()) out.emplace_back(static_cast<unsigned>(stmt.int64(0)), stmt.int64(1));
  return out;
}

TEST(SampleCounts, TheWriterRecordsEachGpusRowsAndReadersCheckThem) {
  TempDir dir;
  const auto path = dir.file("run.db");
  write_run(path, 2, 2500);
  EXPECT_EQ(stored_counts(path, 1), (Counts{{0, 2500}, {1, 2500}}));
  EXPECT_EQ(RunReader::open(path).samples_per_device(1), (Counts{{0, 2500}, {1, 2500}}));

  // A count that lies (sample_counts edited, the rows not): used as given, and found out by
  // the plan, which counts the rows when the chunks do not account for the count.
  {
    Database db(path, SQLITE_OPEN_READWRITE);
    db.exec("UPDATE sample_counts SET row_count = 7 WHERE device_index = 0");
  }
  const auto reader = RunReader::open(path);
  EXPECT_EQ(reader.samples_per_device(1), (Counts{{0, 7}, {1, 2500}}));
  const SamplePlan plan = reader.sample_plan(1, 0, true, 7);
  EXPECT_EQ(plan.rows, 2500);
  EXPECT_EQ(plan.chunk_rows, 2500);

  // A damaged count the damaged chunks agree with (3 × 333…3 rows) sizes nothing: a chunk is
  // never written with more than kChunkRows rows, so the rows are counted and read.
  {
    Database db(path, SQLITE_OPEN_READWRITE);
    db.exec(
        "UPDATE sample_counts SET row_count = 999999999999999 WHERE device_index = 1; UPDATE "
        "sample_chunks SET row_count = 333333333333333 WHERE device_index = 1");
  }
  {
    const auto damaged = RunReader::open(path);
    const SamplePlan recounted = damaged.sample_plan(1, 1, true, 999999999999999);
    EXPECT_EQ(recounted.rows, 2500);
    EXPECT_EQ(recounted.chunk_rows, 0);
    expect_chunks_read_like_rows(path, false);
  }

  // Counts that leave out a GPU with rows are not used: every GPU is counted.
  {
    Database db(path, SQLITE_OPEN_READWRITE);
    db.exec("DELETE FROM sample_counts WHERE device_index = 1");
  }
  EXPECT_EQ(RunReader::open(path).samples_per_device(1), (Counts{{0, 2500}, {1, 2500}}));
}

TEST(SampleCounts, AChangeToARunsRowsDropsItsCountsAndMergeWritesThem) {
  TempDir dir;
  const auto a = dir.file("a.db"), b = dir.file("b.db"), merged = dir.file("merged.db");
  write_run(a, 2, 1300);
  auto writer = RunWriter::create(b, true, make_run(1, "node2"), make_devices(1));
  for (std::int64_t seq = 0; seq < 900; ++seq) writer->push(sample(0, seq));
  writer->finish({});
  {
    Database db(a, SQLITE_OPEN_READWRITE);  // b's counts are dropped by the change, a's rebuilt
    db.exec("DELETE FROM sample_counts");
  }
  ASSERT_EQ(merge(merged, {a, b}, false).runs, 2);
  EXPECT_EQ(stored_counts(merged, 1), (Counts{{0, 1300}, {1, 1300}}));
  EXPECT_EQ(stored_counts(merged, 2), (Counts{{0, 900}}));
  expect_chunks_read_like_rows(merged, true);

  Database db(merged, SQLITE_OPEN_READWRITE);
  // A row added inside the chunks' span: run 1's counts go, run 2's stay; the reader counts
  // run 1's rows and reads GPU 1 from them.
  db.exec(
      "INSERT INTO samples (run_id, device_index, wall_ns, mono_ns, power_w) SELECT run_id, "
      "device_index, wall_ns + 1, mono_ns + 1, 1.5 FROM samples WHERE run_id = 1 AND "
      "device_index = 1 ORDER BY mono_ns LIMIT 1 OFFSET 10");
  EXPECT_TRUE(stored_counts(merged, 1).empty());
  EXPECT_EQ(stored_counts(merged, 2), (Counts{{0, 900}}));
  {
    const auto reader = RunReader::open(merged);
    EXPECT_EQ(reader.samples_per_device(1), (Counts{{0, 1300}, {1, 1301}}));
    EXPECT_EQ(reader.sample_plan(1, 1, true, 1301).chunk_rows, 0);
  }
  expect_chunks_read_like_rows(merged, false);
  // A row deleted, a row moved to another GPU: the run's counts go.
  db.exec("DELETE FROM samples WHERE rowid = (SELECT max(rowid) FROM samples WHERE run_id = 2)");
  EXPECT_TRUE(stored_counts(merged, 2).empty());
  record_sample_counts(db, 2, {{0, 899}});
  db.exec(
      "UPDATE samples SET device_index = 3 WHERE rowid = (SELECT min(rowid) FROM samples "
      "WHERE run_id = 2)");
  EXPECT_TRUE(stored_counts(merged, 2).empty());
  // Other columns may change without a new count.
  record_sample_counts(db, 2, {{0, 898}, {3, 1}});
  db.exec("UPDATE samples SET power_w = 2 WHERE run_id = 2");
  EXPECT_EQ(stored_counts(merged, 2), (Counts{{0, 898}, {3, 1}}));
}

}  // namespace
}  // namespace gpuscope::store
