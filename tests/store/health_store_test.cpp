// Schema 1.8 against real SQLite files: health_samples rows through the RunWriter (absent values
// stay NULL, counters stay exact integers, rows visible once flushed), read back by device and
// time, a 1.7 file read as having none and upgraded by migrate(), and merge carrying the rows.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "core/health.hpp"
#include "store/health_tables.hpp"
#include "store/merge.hpp"
#include "store/run_reader.hpp"
#include "store/run_writer.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store/write_batch.hpp"
#include "store_test_data.hpp"
#include "support/older_schema.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::store {
namespace {

using gpuscope::testing::TempDir;
using testing::make_devices;
using testing::make_run;

constexpr std::int64_t kWall0 = 1'714'566'896'000'000'000;

// GPU `device`'s health at look `seq` (5 s apart): ECC on, corrected errors rising, a large
// NVLink counter, a zero that must stay a measured 0; no row-remap fields (as before Ampere).
HealthRow health_row(unsigned device, std::int64_t seq) {
  HealthRow row;
  row.device_index = device;
  row.wall_ns = kWall0 + seq * 5'000'000'000;
  row.mono_ns = 5'000'000'000 + seq * 5'000'000'000;
  row.set(HealthMetric::EccEnabled, 1);
  row.set(HealthMetric::EccCorrectedVolatile, static_cast<double>(3 * seq + device));
  row.set(HealthMetric::EccUncorrectedVolatile, 0);
  row.set(HealthMetric::PcieReplays, 17);
  row.set(HealthMetric::NvlinkTxKib, 4'503'599'627'370'000.0 + static_cast<double>(seq));
  return row;
}

// A scalar of `sql` on `path` (NULL as "NULL").
std::string scalar(const std::string& path, const std::string& sql) {
  Database db(path, SQLITE_OPEN_READONLY);
  Statement stmt = db.prepare(sql);
  if (!stmt.step()) return "no row";
  return stmt.is_null(0) ? "NULL" : stmt.text(0);
}

void write_run(const std::string& path, int rank, int looks) {
  RunInfo run = make_run(rank, "node" + std::to_string(rank));
  auto writer = RunWriter::create(path, false, run, make_devices(2));
  // GPU 1 before GPU 0, as a reader that looks at GPUs in another order would push them.
  for (int seq = 0; seq < looks; ++seq) {
    writer->push(health_row(1, seq));
    writer->push(health_row(0, seq));
  }
  ASSERT_TRUE(writer->finish({}).empty());
}

TEST(HealthStore, RowsRoundTripWithAbsentValuesNull) {
  TempDir dir;
  const auto path = dir.file("run.db");
  write_run(path, 0, 3);

  const auto reader = RunReader::open(path);
  EXPECT_EQ(reader.schema_minor_version(), kSchemaMinorVersion);
  const auto rows = reader.health_samples(reader.runs().at(0).run_id);
  ASSERT_EQ(rows.size(), 6U);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const unsigned device = i < 3 ? 0U : 1U;  // by device, then time
    const auto seq = static_cast<std::int64_t>(i % 3);
    const HealthRow expected = health_row(device, seq);
    EXPECT_EQ(rows[i].device_index, device);
    EXPECT_EQ(rows[i].wall_ns, expected.wall_ns);
    EXPECT_EQ(rows[i].mono_ns, expected.mono_ns);
    EXPECT_EQ(rows[i].present, expected.present) << "absent stays absent, present stays present";
    for (const auto& m : kHealthMetrics) EXPECT_EQ(rows[i].get(m.id), expected.get(m.id)) << m.name;
  }
  EXPECT_EQ(rows[0].get(HealthMetric::EccUncorrectedVolatile), 0.0) << "a measured 0 is kept";
  EXPECT_FALSE(rows[0].get(HealthMetric::RowRemapPending).has_value());

  // In the file: NULL where absent, integers (exact) where present.
  EXPECT_EQ(scalar(path,
                   "SELECT count(*) FROM health_samples WHERE row_remap_pending IS NULL "
                   "AND remapped_rows_correctable IS NULL AND violation_power_ns IS NULL"),
            "6");
  EXPECT_EQ(scalar(path,
                   "SELECT count(*) FROM health_samples WHERE typeof(ecc_enabled) = "
                   "'integer' AND typeof(nvlink_tx_kib) = 'integer' AND "
                   "typeof(ecc_uncorrected_volatile) = 'integer'"),
            "6");
  EXPECT_EQ(scalar(path, "SELECT max(nvlink_tx_kib) FROM health_samples"), "4503599627370002");
}

TEST(HealthStore, ColumnsFollowTheCatalog) {
  const auto columns = health_columns();
  ASSERT_EQ(columns.size(), 3 + kHealthMetricCount);
  for (std::size_t i = 0; i < kHealthMetricCount; ++i) {
    EXPECT_EQ(columns[3 + i].name, kHealthMetrics[i].name);
  }
  TempDir dir;
  const auto path = dir.file("run.db");
  write_run(path, 0, 1);
  EXPECT_EQ(scalar(path, "SELECT count(*) FROM pragma_table_info('health_samples')"),
            std::to_string(4 + kHealthMetricCount));
  EXPECT_EQ(scalar(path,
                   "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = "
                   "'health_samples_by_device'"),
            "1");
}

// docs/database.md lists every column of the table, with its unit, in table order.
TEST(HealthStore, TheDocsListEveryColumn) {
  std::ifstream file(GPUSCOPE_TEST_DATABASE_DOC);
  std::stringstream text;
  text << file.rdbuf();
  const std::string doc = text.str();
  const auto begin = doc.find("### `health_samples`");
  ASSERT_NE(begin, std::string::npos);
  const std::string section = doc.substr(begin, doc.find("\n## ", begin) - begin);
  for (std::size_t i = 0; i < kHealthMetricCount; ++i) {
    const auto& m = kHealthMetrics[i];
    const std::string unit = m.unit.empty() ? "—" : std::string(m.unit);
    const std::string row =
        "| " + std::to_string(i) + " | `" + std::string(m.name) + "` | " + unit + " |";
    EXPECT_NE(section.find(row), std::string::npos) << row;
  }
}

TEST(HealthStore, RowsAreReadableOnceFlushed) {
  TempDir dir;
  const auto path = dir.file("run.db");
  WriterOptions options;
  options.flush_interval = std::chrono::hours(1);  // only explicit flushes
  auto writer = RunWriter::create(path, false, make_run(), make_devices(1), options);
  writer->push(health_row(0, 0));
  writer->flush();
  const auto reader = RunReader::open(path);
  EXPECT_EQ(reader.runs().at(0).end.status, RunStatus::Running);
  EXPECT_EQ(reader.health_samples(1).size(), 1U) << "committed with the flush, before the end";
  EXPECT_EQ(writer->stats().written.health_samples, 1);
  writer->push(health_row(0, 1));
  EXPECT_TRUE(writer->finish({}).empty());
  EXPECT_EQ(reader.health_samples(1).size(), 2U);
  EXPECT_TRUE(reader.health_samples(2).empty()) << "no such run";
}

// A file as gpuscope wrote it before 1.8: no health_samples, minor version 7.
void make_schema_1_7(const std::string& path) {
  gpuscope::testing::downgrade_schema(path, {7, {"health_samples"}, {}});
}

TEST(HealthStore, AOneSevenFileReadsAsNoneAndMigrates) {
  TempDir dir;
  const auto path = dir.file("old.db");
  write_run(path, 0, 2);
  make_schema_1_7(path);
  {
    const auto reader = RunReader::open(path);
    EXPECT_EQ(reader.schema_minor_version(), 7);
    EXPECT_TRUE(reader.health_samples(1).empty());
  }
  {
    Database db(path, SQLITE_OPEN_READWRITE);
    migrate(db, 1);
    EXPECT_EQ(schema_minor_version(db), kSchemaMinorVersion);
    EXPECT_TRUE(has_table(db, "health_samples"));
    EXPECT_EQ(count_health_samples(db, 1), 0);
    migrate(db, 1);  // twice is harmless
  }
  EXPECT_TRUE(RunReader::open(path).health_samples(1).empty());
}

TEST(HealthStore, MergeCarriesTheRows) {
  TempDir dir;
  write_run(dir.file("a.db"), 0, 2);
  write_run(dir.file("b.db"), 1, 3);
  write_run(dir.file("old.db"), 2, 4);
  make_schema_1_7(dir.file("old.db"));
  const auto summary =
      merge(dir.file("job.db"), {dir.file("b.db"), dir.file("old.db"), dir.file("a.db")}, false);
  EXPECT_EQ(summary.runs, 3);
  EXPECT_EQ(summary.rows.health_samples, 2 * 3 + 2 * 2);
  const auto reader = RunReader::open(dir.file("job.db"));
  EXPECT_EQ(reader.schema_minor_version(), kSchemaMinorVersion);
  const auto first = reader.health_samples(1);  // b.db
  ASSERT_EQ(first.size(), 6U);
  EXPECT_EQ(first.back().device_index, 1U);
  EXPECT_EQ(first.back().get(HealthMetric::EccCorrectedVolatile), 3.0 * 2 + 1);
  EXPECT_FALSE(first.back().get(HealthMetric::RowRemapFailure).has_value());
  EXPECT_TRUE(reader.health_samples(2).empty()) << "the 1.7 input had none";
  EXPECT_EQ(reader.health_samples(3).size(), 4U);

  // A lone part moved into place counts its rows as merge() does.
  write_run(dir.file("part.db"), 0, 2);
  const auto moved = merge_parts(dir.file("moved.db"), {dir.file("part.db")}, false);
  EXPECT_EQ(moved.rows.health_samples, 4);
  EXPECT_EQ(RunReader::open(dir.file("moved.db")).health_samples(1).size(), 4U);
}

TEST(HealthStore, AFullBatchDropsSamplesBeforeHealthRows) {
  WriteBatch batch;
  for (int seq = 0; seq < 100; ++seq) batch.samples.push_back(testing::make_sample(0, seq));
  for (int seq = 0; seq < 4; ++seq) batch.health.push_back(health_row(0, seq));
  const std::size_t health_bytes = 4 * sizeof(HealthRow);
  auto dropped = batch.drop_oldest(health_bytes + sizeof(SampleRow));
  EXPECT_EQ(batch.health.size(), 4U);
  EXPECT_EQ(dropped.health_samples, 0);
  EXPECT_GE(dropped.samples, 99);
  dropped = batch.drop_oldest(2 * sizeof(HealthRow));
  EXPECT_EQ(batch.samples.size(), 0U);
  ASSERT_EQ(batch.health.size(), 2U) << "the oldest health rows go, the newest stay";
  EXPECT_EQ(batch.health.front().wall_ns, health_row(0, 2).wall_ns);
  EXPECT_EQ(dropped.health_samples, 2);
  EXPECT_EQ(batch.counts().health_samples, 2);
}

}  // namespace
}  // namespace gpuscope::store
