// Schema 1.10 against real SQLite files: the node's energy domains, readings and CPU times
// through the RunWriter, read back in order with absent values absent, a 1.9 file read as having
// none and upgraded by migrate(), and merge keeping each run's node rows with its run (its host).
#include <gtest/gtest.h>

#include <string>

#include "core/node_energy.hpp"
#include "store/merge.hpp"
#include "store/node_tables.hpp"
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

constexpr std::int64_t kWall0 = 1'714'566'896'000'000'000;

// Two sockets' packages and one DRAM domain (powercap), and a Grace module meter.
std::vector<NodeEnergyDomain> domains() {
  std::vector<NodeEnergyDomain> out;
  out.push_back({0, kNodeSourcePowercap, "intel-rapl:0", "package-0", "package", 0U, true, false,
                 262'143'328'850ULL});
  out.push_back({1, kNodeSourcePowercap, "intel-rapl:0:0", "dram", "dram", 0U, true, false,
                 65'712'999'613ULL});
  out.push_back({2, kNodeSourcePowercap, "intel-rapl:1", "package-1", "package", 1U, true, false,
                 262'143'328'850ULL});
  out.push_back({3, kNodeSourceGraceHwmon, "hwmon2/power1", "Module Power Socket 0", "module", 0U,
                 false, true, std::nullopt});
  return out;
}

// Domain `d`'s reading `seq` (1 s apart): 100 J/s per domain number plus one.
NodeEnergySample sample(unsigned d, std::int64_t seq, std::int64_t mono0 = 2'000'000'000) {
  NodeEnergySample s;
  s.domain = d;
  s.wall_ns = kWall0 + seq * 1'000'000'000;
  s.mono_ns = mono0 + seq * 1'000'000'000;
  s.joules = 100.0 * (d + 1) * static_cast<double>(seq);
  if (d == 3) s.power_w = 400.5;
  return s;
}

void write_run(const std::string& path, int rank, int looks) {
  auto writer = RunWriter::create(path, false, make_run(rank, "node" + std::to_string(rank)),
                                  make_devices(1));
  for (auto d : domains()) writer->push(std::move(d));
  writer->push(NodeCpuTime{kWall0, 2'000'000'000, "/job.slice/job_1", 10, 1000, 4000});
  for (int seq = 0; seq < looks; ++seq) {
    for (unsigned d = 4; d-- > 0;) writer->push(sample(d, seq));  // not in domain order
  }
  writer->push(NodeCpuTime{kWall0 + 9, 9'000'000'000, std::nullopt, std::nullopt, 5000, 9000});
  ASSERT_TRUE(writer->finish({}).empty());
}

TEST(NodeStore, RowsRoundTrip) {
  TempDir dir;
  const auto path = dir.file("run.db");
  write_run(path, 0, 3);
  const auto reader = RunReader::open(path);
  EXPECT_EQ(reader.schema_minor_version(), kSchemaMinorVersion);
  const auto found = reader.node_domains(1);
  const auto expected = domains();
  ASSERT_EQ(found.size(), expected.size());
  for (std::size_t i = 0; i < found.size(); ++i) {
    EXPECT_EQ(found[i].domain, expected[i].domain);
    EXPECT_EQ(found[i].source, expected[i].source);
    EXPECT_EQ(found[i].zone, expected[i].zone);
    EXPECT_EQ(found[i].name, expected[i].name);
    EXPECT_EQ(found[i].kind, expected[i].kind);
    EXPECT_EQ(found[i].socket, expected[i].socket);
    EXPECT_EQ(found[i].additive, expected[i].additive);
    EXPECT_EQ(found[i].includes_gpu, expected[i].includes_gpu);
    EXPECT_EQ(found[i].max_range_uj, expected[i].max_range_uj);
  }
  const auto samples = reader.node_samples(1);
  ASSERT_EQ(samples.size(), 12U);
  for (std::size_t i = 0; i < samples.size(); ++i) {  // by domain, then time
    const NodeEnergySample want = sample(static_cast<unsigned>(i / 3), static_cast<int>(i % 3));
    EXPECT_EQ(samples[i].domain, want.domain);
    EXPECT_EQ(samples[i].mono_ns, want.mono_ns);
    EXPECT_EQ(samples[i].wall_ns, want.wall_ns);
    EXPECT_DOUBLE_EQ(samples[i].joules, want.joules);
    EXPECT_EQ(samples[i].power_w, want.power_w) << "a counter has no power, a meter has";
  }
  const auto times = reader.node_cpu_times(1);
  ASSERT_EQ(times.size(), 2U);
  EXPECT_EQ(times[0].cgroup, "/job.slice/job_1");
  EXPECT_EQ(times[0].cgroup_usage_usec, 10);
  EXPECT_EQ(times[1].cgroup_usage_usec, std::nullopt) << "unknown stays unknown, never 0";
  EXPECT_EQ(times[1].node_busy_usec, 5000);
  EXPECT_EQ(times[1].node_total_usec, 9000);
}

// A file as gpuscope wrote it before 1.10: no node tables, minor version 9.
void make_schema_1_9(const std::string& path) {
  gpuscope::testing::downgrade_schema(
      path, {9, {"node_energy_domains", "node_energy_samples", "node_cpu_time"}, {}});
}

TEST(NodeStore, AOneNineFileReadsAsNoneAndMigrates) {
  TempDir dir;
  const auto path = dir.file("old.db");
  write_run(path, 0, 2);
  make_schema_1_9(path);
  {
    const auto reader = RunReader::open(path);
    EXPECT_EQ(reader.schema_minor_version(), 9);
    EXPECT_TRUE(reader.node_domains(1).empty());
    EXPECT_TRUE(reader.node_samples(1).empty());
    EXPECT_TRUE(reader.node_cpu_times(1).empty());
  }
  {
    Database db(path, SQLITE_OPEN_READWRITE);
    migrate(db, 1);
    EXPECT_EQ(schema_minor_version(db), kSchemaMinorVersion);
    EXPECT_TRUE(has_table(db, "node_energy_domains"));
    EXPECT_TRUE(has_table(db, "node_energy_samples"));
    EXPECT_TRUE(has_table(db, "node_cpu_time"));
    EXPECT_EQ(count_node_rows(db, 1), 0);
    migrate(db, 1);  // twice is harmless
  }
  // The upgraded file takes new rows as a new one does.
  {
    Database db(path, SQLITE_OPEN_READWRITE);
    Statement insert = db.prepare(insert_node_sample_sql());
    bind_node_sample(insert, 1, sample(0, 1));
    insert.run();
  }
  EXPECT_EQ(RunReader::open(path).node_samples(1).size(), 1U);
}

TEST(NodeStore, MergeKeepsEachRunsNodeRowsWithItsRun) {
  TempDir dir;
  write_run(dir.file("a.db"), 0, 2);
  write_run(dir.file("b.db"), 1, 3);
  write_run(dir.file("old.db"), 2, 4);
  make_schema_1_9(dir.file("old.db"));
  const auto summary =
      merge(dir.file("job.db"), {dir.file("b.db"), dir.file("old.db"), dir.file("a.db")}, false);
  EXPECT_EQ(summary.runs, 3);
  // Each run: 4 domains, 2 CPU times and 4 readings per look.
  EXPECT_EQ(summary.rows.node_rows, (4 + 2 + 4 * 3) + (4 + 2 + 4 * 2));
  const auto reader = RunReader::open(dir.file("job.db"));
  const auto runs = reader.runs();
  ASSERT_EQ(runs.size(), 3U);
  EXPECT_EQ(runs[0].info.host, "node1");
  EXPECT_EQ(reader.node_samples(runs[0].run_id).size(), 12U) << "b.db's rows with b.db's run";
  EXPECT_TRUE(reader.node_domains(runs[1].run_id).empty()) << "the 1.9 input had none";
  EXPECT_EQ(runs[2].info.host, "node0");
  EXPECT_EQ(reader.node_samples(runs[2].run_id).size(), 8U);
  EXPECT_EQ(reader.node_domains(runs[2].run_id).size(), 4U);

  write_run(dir.file("part.db"), 0, 2);
  const auto moved = merge_parts(dir.file("moved.db"), {dir.file("part.db")}, false);
  EXPECT_EQ(moved.rows.node_rows, 4 + 2 + 4 * 2) << "a lone part counts as merge counts";
}

TEST(NodeStore, AFullBatchDropsTheOldestReadingsNeverTheDomains) {
  WriteBatch batch;
  for (auto d : domains()) batch.node_domains.push_back(std::move(d));
  for (int seq = 0; seq < 100; ++seq) batch.node_samples.push_back(sample(0, seq));
  const auto dropped = batch.drop_oldest(batch.bytes() - 50 * sizeof(NodeEnergySample));
  EXPECT_EQ(batch.node_domains.size(), 4U);
  EXPECT_GE(dropped.node_rows, 50);
  ASSERT_FALSE(batch.node_samples.empty());
  EXPECT_EQ(batch.node_samples.back().mono_ns, sample(0, 99).mono_ns) << "the newest stay";
}

}  // namespace
}  // namespace gpuscope::store
