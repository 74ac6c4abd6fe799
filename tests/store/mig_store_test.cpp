// Schema 1.9 against real SQLite files: MIG devices as rows of their own (row index
// 1000 + 100 × parent + GPU instance id, core/mig.hpp) with every MIG field round-tripping, NULL
// on GPUs; their samples, processes, events, health rows and kernel-trace devices keyed on that
// row index like a GPU's; a 1.8 file read as before (no MIG) and upgraded by migrate(); merge and
// merge_parts carrying MIG devices with their row indices.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "core/mig.hpp"
#include "store/kernel_tables.hpp"
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
using testing::make_sample;

constexpr unsigned kFullInstance = mig_device_index(0, 3);  // GPU 0 GI 3: every field known
constexpr unsigned kBareInstance = mig_device_index(1, 0);  // GPU 1 GI 0: only who it is

// A100-80GB-like GPU 0 in MIG mode with a 1g.10gb instance (GI 3) and GPU 1 in MIG mode with a
// 7g.80gb instance of which only the identity is known; GPU 2 not in MIG mode, GPU 3 unable to
// say. Devices in row-index order, as the reader gives them back.
std::vector<DeviceDescription> mig_devices() {
  auto gpus = make_devices(4);
  gpus[0].mig_enabled = true;
  gpus[1].mig_enabled = true;
  gpus[2].mig_enabled = false;
  DeviceDescription full;
  full.index = kFullInstance;
  full.name = "NVIDIA A100-SXM4-80GB MIG 1g.10gb";
  full.uuid = "MIG-11111111-2222-3333-4444-555555555555";
  full.memory_total_bytes = 9728ULL << 20;
  full.saturation_source = "dcgm";
  full.mig = MigIdentity{0, 2, 3, 0, "1g.10gb", 1, 1, 14, 7};
  DeviceDescription bare;
  bare.index = kBareInstance;
  bare.mig = MigIdentity{};
  bare.mig->parent_index = 1;
  bare.mig->mig_index = 0;
  bare.mig->gpu_instance_id = 0;
  gpus.push_back(full);
  gpus.push_back(bare);
  return gpus;
}

void expect_same_mig(const std::optional<MigIdentity>& got, const std::optional<MigIdentity>& want,
                     unsigned index) {
  ASSERT_EQ(got.has_value(), want.has_value()) << "device " << index;
  if (!want) return;
  EXPECT_EQ(got->parent_index, want->parent_index) << index;
  EXPECT_EQ(got->mig_index, want->mig_index) << index;
  EXPECT_EQ(got->gpu_instance_id, want->gpu_instance_id) << index;
  EXPECT_EQ(got->compute_instance_id, want->compute_instance_id) << index;
  EXPECT_EQ(got->profile, want->profile) << index;
  EXPECT_EQ(got->gpu_slices, want->gpu_slices) << index;
  EXPECT_EQ(got->compute_slices, want->compute_slices) << index;
  EXPECT_EQ(got->multiprocessors, want->multiprocessors) << index;
  EXPECT_EQ(got->parent_slices, want->parent_slices) << index;
}

void expect_mig_devices(const std::vector<DeviceDescription>& got) {
  const auto want = mig_devices();
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].index, want[i].index);
    EXPECT_EQ(got[i].uuid, want[i].uuid);
    EXPECT_EQ(got[i].mig_enabled, want[i].mig_enabled) << "device " << want[i].index;
    expect_same_mig(got[i].mig, want[i].mig, want[i].index);
  }
}

// An instance's samples as a sampler writes them: its own saturation and memory, no power,
// temperature or clocks (they are the parent's).
SampleRow instance_sample(unsigned device, std::int64_t seq) {
  SampleRow row = make_sample(device, seq);
  for (Metric m :
       {Metric::PowerW, Metric::PowerInstantW, Metric::PowerAverageW, Metric::ModulePowerW,
        Metric::EnergyMj, Metric::TemperatureC, Metric::SmClockMhz, Metric::PowerLimitW}) {
    row.present.reset(static_cast<std::size_t>(m));
  }
  row.set(Metric::SmActivePct, 40.0 + static_cast<double>(seq));
  return row;
}

// One run: GPU 0 and the two instances sampled `ticks` times, a process on the instance, an
// event about it.
void write_mig_run(const std::string& path, int rank, int ticks) {
  auto writer =
      RunWriter::create(path, false, make_run(rank, "node" + std::to_string(rank)), mig_devices());
  for (int seq = 0; seq < ticks; ++seq) {
    writer->push(make_sample(0, seq));
    writer->push(instance_sample(kFullInstance, seq));
    writer->push(instance_sample(kBareInstance, seq));
  }
  GpuProcess p;
  p.pid = 777;
  p.first_wall_ns = 1;
  p.first_mono_ns = 5'000'000'000;
  writer->push(p);
  writer->push(
      ProcessSample{kFullInstance, 10, 5'000'000'000, 777, 2ULL << 30, std::nullopt, std::nullopt});
  writer->push(Event{3, 5'100'000'000, kFullInstance, EventKind::Other, "instance event"});
  ASSERT_TRUE(writer->finish({}).empty());
}

// A scalar of `sql` on `path` (NULL as "NULL").
std::string scalar(const std::string& path, const std::string& sql) {
  Database db(path, SQLITE_OPEN_READONLY);
  Statement stmt = db.prepare(sql);
  if (!stmt.step()) return "no row";
  return stmt.is_null(0) ? "NULL" : stmt.text(0);
}

TEST(MigStore, EveryMigFieldRoundTripsAndGpusKeepNulls) {
  TempDir dir;
  const auto path = dir.file("run.db");
  write_mig_run(path, 0, 3);
  const auto reader = RunReader::open(path);
  EXPECT_EQ(reader.schema_minor_version(), kSchemaMinorVersion);
  expect_mig_devices(reader.devices(1));

  // As stored: a GPU's MIG identity columns are NULL, mig_enabled 1/0/NULL; an instance has no
  // mig_enabled.
  auto column = [&](const char* name, unsigned index) {
    return scalar(path, std::string("SELECT ") + name +
                            " FROM devices WHERE device_index = " + std::to_string(index));
  };
  for (const char* name :
       {"parent_index", "mig_index", "gpu_instance_id", "compute_instance_id", "mig_profile",
        "gpu_slices", "compute_slices", "multiprocessors", "parent_slices"}) {
    for (unsigned gpu = 0; gpu < 4; ++gpu) EXPECT_EQ(column(name, gpu), "NULL") << name;
  }
  EXPECT_EQ(column("mig_enabled", 0), "1");
  EXPECT_EQ(column("mig_enabled", 2), "0");
  EXPECT_EQ(column("mig_enabled", 3), "NULL");
  EXPECT_EQ(column("mig_enabled", kFullInstance), "NULL");
  EXPECT_EQ(column("mig_profile", kFullInstance), "1g.10gb");
  EXPECT_EQ(column("parent_index", kBareInstance), "1");
  EXPECT_EQ(column("mig_profile", kBareInstance), "NULL") << "unknown stays unknown";
}

TEST(MigStore, AnInstanceRowIndexKeysItsRowsLikeAGpus) {
  TempDir dir;
  const auto path = dir.file("run.db");
  write_mig_run(path, 0, 1500);  // more than one chunk of samples
  const auto reader = RunReader::open(path);
  EXPECT_EQ(reader.count_samples({1, kFullInstance}), 1500);
  EXPECT_EQ(reader.count_samples({1, kBareInstance}), 1500);
  RunSample sample;
  auto cursor = reader.samples({1, kFullInstance});
  ASSERT_TRUE(cursor.next(sample));
  EXPECT_EQ(sample.row.device_index, kFullInstance);
  EXPECT_EQ(sample.row.get(Metric::SmActivePct), 40.0);
  EXPECT_FALSE(sample.row.get(Metric::PowerW).has_value()) << "the parent's, not the instance's";

  // The columnar copy: chunks for the instance, read back as its rows.
  const SamplePlan plan = reader.sample_plan(1, kFullInstance);
  EXPECT_EQ(plan.chunk_rows, 1500);
  SampleColumns columns;
  const Metric metrics[] = {Metric::SmActivePct, Metric::PowerW};
  reader.read_samples(plan, metrics, columns);
  ASSERT_EQ(columns.rows(), 1500U);
  const auto& sm = columns.values[static_cast<std::size_t>(Metric::SmActivePct)];
  EXPECT_EQ(sm[1499], 40.0 + 1499);
  // An instance has no power of its own: the column is empty (every row NULL).
  EXPECT_TRUE(columns.values[static_cast<std::size_t>(Metric::PowerW)].empty());

  const auto processes = reader.process_samples(1);
  ASSERT_EQ(processes.size(), 1U);
  EXPECT_EQ(processes[0].device_index, kFullInstance);
  EXPECT_EQ(processes[0].used_memory_bytes, 2ULL << 30);
  RunEvent event;
  auto events = reader.events({1, {}});
  ASSERT_TRUE(events.next(event));
  EXPECT_EQ(event.event.device_index, kFullInstance);
}

TEST(MigStore, HealthRowsAndTraceDevicesTakeAnInstanceIndex) {
  TempDir dir;
  const auto path = dir.file("run.db");
  {
    auto writer = RunWriter::create(path, false, make_run(), mig_devices());
    HealthRow health;
    health.device_index = kFullInstance;
    health.wall_ns = 1;
    health.mono_ns = 2;
    health.set(HealthMetric::PcieReplays, 3);
    writer->push(health);
    ASSERT_TRUE(writer->finish({}).empty());
  }
  EXPECT_EQ(RunReader::open(path).health_samples(1).at(0).device_index, kFullInstance);
  {
    auto trace = KernelTraceWriter::open(path, 1);
    TraceProcess process;
    process.process = 1;
    process.pid = 4242;
    process.host = "node1";
    process.command = "python train.py";
    process.clock = "monotonic";
    trace->add(process);
    trace->add(TraceDevice{1, 0, kFullInstance, "GPU-00000000", std::nullopt, "A100"});
    trace->commit();
  }
  const auto devices = KernelTraceReader::open(path).devices(1);
  ASSERT_EQ(devices.size(), 1U);
  EXPECT_EQ(devices[0].device_index, kFullInstance);
}

// A file as gpuscope wrote it before 1.9: no MIG columns, minor version 8.
void make_schema_1_8(const std::string& path) {
  gpuscope::testing::OlderSchema older{8, {}, {}};
  for (const char* column : {"mig_enabled", "parent_index", "mig_index", "gpu_instance_id",
                             "compute_instance_id", "mig_profile", "gpu_slices", "compute_slices",
                             "multiprocessors", "parent_slices", "vendor", "vendor_index"}) {
    older.columns.emplace_back("devices", column);
  }
  gpuscope::testing::downgrade_schema(path, older);
}

TEST(MigStore, AOneEightFileReadsWithoutMigAndMigrates) {
  TempDir dir;
  const auto path = dir.file("old.db");
  RunWriter::create(path, false, make_run(), make_devices(2))->finish({});
  make_schema_1_8(path);
  {
    const auto reader = RunReader::open(path);
    EXPECT_EQ(reader.schema_minor_version(), 8);
    const auto devices = reader.devices(1);
    ASSERT_EQ(devices.size(), 2U);
    EXPECT_EQ(devices[1].uuid, "GPU-00000001");
    EXPECT_FALSE(devices[1].mig_enabled.has_value());
    EXPECT_FALSE(devices[1].mig.has_value());
  }
  {
    Database db(path, SQLITE_OPEN_READWRITE);
    migrate(db, 1);
    EXPECT_EQ(schema_minor_version(db), kSchemaMinorVersion);
    for (const auto& c : device_columns()) EXPECT_TRUE(has_column(db, "devices", c.name));
    EXPECT_EQ(db.query_int("SELECT count(*) FROM devices WHERE mig_enabled IS NULL AND "
                           "parent_index IS NULL AND mig_profile IS NULL"),
              2);
    migrate(db, 1);  // twice is harmless
  }
  // Columns added at the end, in the order of a new file.
  const auto fresh = dir.file("fresh.db");
  RunWriter::create(fresh, false, make_run(), make_devices(1))->finish({});
  const std::string order =
      "SELECT group_concat(name, ',') FROM pragma_table_info('devices') ORDER BY cid";
  EXPECT_EQ(scalar(path, order), scalar(fresh, order));
  EXPECT_FALSE(RunReader::open(path).devices(1)[0].mig.has_value());
}

// A file as gpuscope wrote it before 1.11: no vendor columns; its GPUs read as NVIDIA's.
TEST(MigStore, AOneTenFileReadsItsGpusAsNvidiaAndMigrates) {
  TempDir dir;
  const auto path = dir.file("old.db");
  auto devices = make_devices(2);
  devices[1].vendor = Vendor::Amd;
  devices[1].vendor_index = 0;
  RunWriter::create(path, false, make_run(), devices)->finish({});
  EXPECT_EQ(RunReader::open(path).devices(1)[1].vendor, Vendor::Amd);
  EXPECT_EQ(RunReader::open(path).devices(1)[1].vendor_index, 0U);
  gpuscope::testing::downgrade_schema(
      path, {10, {}, {{"devices", "vendor"}, {"devices", "vendor_index"}}});
  for (const auto& d : RunReader::open(path).devices(1)) {
    EXPECT_EQ(d.vendor, Vendor::Nvidia);
    EXPECT_FALSE(d.vendor_index);
  }
  Database db(path, SQLITE_OPEN_READWRITE);
  migrate(db, 1);
  EXPECT_EQ(schema_minor_version(db), kSchemaMinorVersion);
  EXPECT_TRUE(has_column(db, "devices", "vendor"));
  EXPECT_EQ(db.query_int("SELECT count(*) FROM devices WHERE vendor IS NULL"), 2);
}

TEST(MigStore, MergeKeepsMigDevicesAndTheirRowIndices) {
  TempDir dir;
  write_mig_run(dir.file("a.db"), 0, 1100);
  write_mig_run(dir.file("b.db"), 1, 2);
  RunWriter::create(dir.file("old.db"), false, make_run(2, "node2"), make_devices(1))->finish({});
  make_schema_1_8(dir.file("old.db"));
  const auto summary =
      merge(dir.file("job.db"), {dir.file("b.db"), dir.file("old.db"), dir.file("a.db")}, false);
  EXPECT_EQ(summary.runs, 3);
  const auto reader = RunReader::open(dir.file("job.db"));
  EXPECT_EQ(reader.schema_minor_version(), kSchemaMinorVersion);
  expect_mig_devices(reader.devices(1));  // b.db
  const auto old = reader.devices(2);
  ASSERT_EQ(old.size(), 1U);
  EXPECT_FALSE(old[0].mig.has_value());
  EXPECT_FALSE(old[0].mig_enabled.has_value());
  expect_mig_devices(reader.devices(3));  // a.db
  EXPECT_EQ(reader.count_samples({3, kFullInstance}), 1100);
  EXPECT_EQ(reader.sample_plan(3, kFullInstance).chunk_rows, 1100);
  EXPECT_EQ(reader.process_samples(3).at(0).device_index, kFullInstance);

  // A lone part is moved into place as it is.
  write_mig_run(dir.file("part.db"), 0, 2);
  const auto moved = merge_parts(dir.file("moved.db"), {dir.file("part.db")}, false);
  EXPECT_EQ(moved.rows.samples, 6);
  expect_mig_devices(RunReader::open(dir.file("moved.db")).devices(1));
}

// docs/database.md lists every column of devices.
TEST(MigStore, TheDocsListEveryDeviceColumn) {
  std::ifstream file(GPUSCOPE_TEST_DATABASE_DOC);
  std::stringstream text;
  text << file.rdbuf();
  const std::string doc = text.str();
  const auto begin = doc.find("### `devices`");
  ASSERT_NE(begin, std::string::npos);
  const std::string section = doc.substr(begin, doc.find("\n### ", begin + 1) - begin);
  for (const auto& c : device_columns()) {
    EXPECT_NE(section.find("| `" + std::string(c.name) + "` |"), std::string::npos) << c.name;
  }
}

}  // namespace
}  // namespace gpuscope::store
