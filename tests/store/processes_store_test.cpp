// Schema 1.3 against real SQLite files: the rank context of any launcher in runs, the processes
// and process_samples tables (round trip, NULLs kept NULL), and files from before 1.3: read with
// the rank context taken from their SLURM columns, merged with NULL rank columns, upgraded by
// migrate().
#include <gtest/gtest.h>

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

RunInfo openmpi_run(int rank) {
  RunInfo run = make_run(-1, "vm");
  run.ranks.launcher = "openmpi";
  run.ranks.job_id = "2024734721";
  run.ranks.rank = rank;
  run.ranks.local_rank = rank;
  run.ranks.world_size = 4;
  run.ranks.local_world_size = 4;
  run.ranks.pod_name = "train-worker-0";
  run.ranks.pod_namespace = "ml";
  return run;
}

GpuProcess full_process() {
  GpuProcess p;
  p.pid = 4242;
  p.start_ticks = 123456789;
  p.first_wall_ns = 1'714'566'897'000'000'000;
  p.first_mono_ns = 6'000'000'000;
  p.command = "python";
  p.command_line = "python train.py --lr 3e-4 it's";
  p.uid = 1000;
  p.user = "bob";
  p.ppid = 4000;
  p.cgroup = "/kubepods.slice/kubepods-burstable.slice/x.scope";
  p.container_id = std::string(64, 'a');
  p.container_runtime = "containerd";
  p.pod_uid = "1b2c3d4e-0000-4000-8000-00000000abcd";
  p.pod_name = "train-worker-0";
  p.pod_namespace = "ml";
  p.slurm_job_id = "777";
  p.slurm_step = "batch";
  p.launcher = "openmpi";
  p.rank = 3;
  p.local_rank = 1;
  p.in_job = false;
  return p;
}

TEST(ProcessesStore, RankContextAndProcessesRoundTrip) {
  TempDir dir;
  const auto path = dir.file("run.db");
  auto writer = RunWriter::create(path, false, openmpi_run(3), make_devices(2));
  writer->push(full_process());
  GpuProcess bare;  // a pid /proc could not tell anything about
  bare.pid = 99;
  bare.first_wall_ns = 1;
  bare.first_mono_ns = 7'000'000'000;
  writer->push(bare);
  GpuProcess ours = full_process();
  ours.pid = 5000;
  ours.first_mono_ns = 8'000'000'000;
  ours.in_job = true;
  writer->push(ours);
  writer->push(ProcessSample{1, 10, 6'000'000'000, 4242, 3ULL << 30, 37.0, 12.0});
  writer->push(ProcessSample{0, 11, 7'000'000'000, 99, std::nullopt, std::nullopt, std::nullopt});
  EXPECT_TRUE(writer->finish({}).empty());

  const auto reader = RunReader::open(path);
  EXPECT_EQ(reader.schema_minor_version(), kSchemaMinorVersion);
  const auto runs = reader.runs();
  ASSERT_EQ(runs.size(), 1U);
  const RankContext& r = runs[0].info.ranks;
  EXPECT_EQ(r.launcher, "openmpi");
  EXPECT_EQ(r.job_id, "2024734721");
  EXPECT_EQ(r.rank, 3);
  EXPECT_EQ(r.local_rank, 3);
  EXPECT_EQ(r.world_size, 4);
  EXPECT_EQ(r.local_world_size, 4);
  EXPECT_EQ(r.pod_name, "train-worker-0");
  EXPECT_EQ(r.pod_namespace, "ml");
  EXPECT_FALSE(r.node_name.has_value());
  EXPECT_FALSE(runs[0].info.slurm.active());

  const auto processes = reader.processes(runs[0].run_id);
  ASSERT_EQ(processes.size(), 3U);
  const GpuProcess& p = processes[0];
  const GpuProcess expected = full_process();
  EXPECT_EQ(p.pid, expected.pid);
  EXPECT_EQ(p.start_ticks, expected.start_ticks);
  EXPECT_EQ(p.first_wall_ns, expected.first_wall_ns);
  EXPECT_EQ(p.command_line, expected.command_line);
  EXPECT_EQ(p.uid, expected.uid);
  EXPECT_EQ(p.user, expected.user);
  EXPECT_EQ(p.ppid, expected.ppid);
  EXPECT_EQ(p.cgroup, expected.cgroup);
  EXPECT_EQ(p.container_id, expected.container_id);
  EXPECT_EQ(p.container_runtime, expected.container_runtime);
  EXPECT_EQ(p.pod_uid, expected.pod_uid);
  EXPECT_EQ(p.slurm_job_id, expected.slurm_job_id);
  EXPECT_EQ(p.slurm_step, expected.slurm_step);
  EXPECT_EQ(p.rank, 3);
  EXPECT_EQ(p.local_rank, 1);
  EXPECT_EQ(p.in_job, false);
  // Absent stays absent: NULL, never 0 or "".
  EXPECT_EQ(processes[1].pid, 99U);
  EXPECT_FALSE(processes[1].command.has_value());
  EXPECT_FALSE(processes[1].uid.has_value());
  EXPECT_FALSE(processes[1].in_job.has_value());
  EXPECT_EQ(processes[2].in_job, true);

  const auto samples = reader.process_samples(runs[0].run_id);
  ASSERT_EQ(samples.size(), 2U);
  EXPECT_EQ(samples[0].device_index, 0U);  // by device, then time
  EXPECT_FALSE(samples[0].used_memory_bytes.has_value());
  EXPECT_FALSE(samples[0].sm_percent.has_value());
  EXPECT_EQ(samples[1].used_memory_bytes, 3ULL << 30);
  EXPECT_EQ(samples[1].sm_percent, 37.0);
  EXPECT_EQ(samples[1].memory_percent, 12.0);
}

// A file as gpuscope wrote it before 1.3: no rank columns, no process tables, minor version 2.
void make_schema_1_2(const std::string& path) {
  gpuscope::testing::OlderSchema older{2, {"processes", "process_samples", "grid_intensity"}, {}};
  for (const char* column : {"launcher", "launcher_job_id", "rank", "local_rank", "world_size",
                             "local_world_size", "node_name", "pod_name", "pod_namespace"}) {
    older.columns.emplace_back("runs", column);
  }
  gpuscope::testing::downgrade_schema(path, older);
}

TEST(ProcessesStore, FilesFromBeforeOneThreeReadTheirSlurmRanks) {
  TempDir dir;
  const auto path = dir.file("old.db");
  RunWriter::create(path, false, make_run(2, "nid7"), make_devices(1))->finish({});
  make_schema_1_2(path);
  const auto reader = RunReader::open(path);
  EXPECT_EQ(reader.schema_minor_version(), 2);
  const auto runs = reader.runs();
  ASSERT_EQ(runs.size(), 1U);
  EXPECT_EQ(runs[0].info.ranks.launcher, "slurm");
  EXPECT_EQ(runs[0].info.ranks.rank, 2);
  EXPECT_EQ(runs[0].info.ranks.world_size, 3);
  EXPECT_EQ(runs[0].info.ranks.job_id, "4242");
  EXPECT_TRUE(reader.processes(runs[0].run_id).empty());
  EXPECT_TRUE(reader.process_samples(runs[0].run_id).empty());
}

TEST(ProcessesStore, MergeTakesOldAndNewInputs) {
  TempDir dir;
  const auto old_path = dir.file("old.db");
  RunWriter::create(old_path, false, make_run(0, "nid1"), make_devices(1))->finish({});
  make_schema_1_2(old_path);
  const auto new_path = dir.file("new.db");
  auto writer = RunWriter::create(new_path, false, openmpi_run(1), make_devices(1));
  writer->push(full_process());
  writer->push(ProcessSample{0, 10, 6'000'000'000, 4242, 1ULL << 30, std::nullopt, std::nullopt});
  writer->finish({});

  const auto merged = dir.file("merged.db");
  EXPECT_EQ(merge(merged, {old_path, new_path}, false).runs, 2);
  const auto reader = RunReader::open(merged);
  const auto runs = reader.runs();
  ASSERT_EQ(runs.size(), 2U);
  EXPECT_EQ(runs[0].info.ranks.launcher, "slurm");  // from its SLURM columns
  EXPECT_EQ(runs[1].info.ranks.launcher, "openmpi");
  EXPECT_EQ(runs[1].info.ranks.rank, 1);
  EXPECT_TRUE(reader.processes(runs[0].run_id).empty());
  ASSERT_EQ(reader.processes(runs[1].run_id).size(), 1U);
  EXPECT_EQ(reader.process_samples(runs[1].run_id).size(), 1U);
}

TEST(ProcessesStore, MigrateAddsTheRankColumnsAndProcessTables) {
  TempDir dir;
  const auto path = dir.file("old.db");
  RunWriter::create(path, false, make_run(1, "nid1"), make_devices(1))->finish({});
  make_schema_1_2(path);
  {
    Database db(path, SQLITE_OPEN_READWRITE);
    migrate(db, 1);
    EXPECT_EQ(schema_minor_version(db), kSchemaMinorVersion);
    EXPECT_TRUE(has_table(db, "processes"));
    EXPECT_TRUE(has_table(db, "process_samples"));
    // The rank columns were added at the end, NULL in the runs already there.
    EXPECT_EQ(db.query_int("SELECT count(*) FROM runs WHERE launcher IS NULL AND rank IS NULL"), 1);
    migrate(db, 1);  // twice is harmless
  }
  const auto runs = RunReader::open(path).runs();
  EXPECT_EQ(runs[0].info.ranks.launcher, "slurm");
  EXPECT_EQ(runs[0].info.ranks.rank, 1);
}

}  // namespace
}  // namespace gpuscope::store
