// Sidecar files of several processes into a real run database: devices matched by UUID and PCI
// address, times converted, names demangled and shared, problems said; read back by the kernel
// trace reader and by `gpuscope kernels`' summary of run databases; kept by merge; added to a
// file of schema 1.1.
#include "trace/import.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "core/error.hpp"
#include "kernels/run_database.hpp"
#include "kernels/summary.hpp"
#include "store/kernel_tables.hpp"
#include "store/merge.hpp"
#include "store/run_file.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "support/older_schema.hpp"
#include "support/temp_dir.hpp"
#include "trace/sidecar_reader.hpp"
#include "trace/sidecar_writer.hpp"

namespace gpuscope::trace {
namespace {

using gpuscope::testing::TempDir;
namespace fs = std::filesystem;

constexpr std::int64_t kStartMono = 5'000'000'000;
constexpr std::int64_t kStartWall = 1'714'566'896'000'000'000;

std::vector<DeviceDescription> gpus() {
  std::vector<DeviceDescription> out(4);
  for (unsigned i = 0; i < 4; ++i) {
    out[i].index = i;
    out[i].name = "NVIDIA H100";
    out[i].uuid = "GPU-0000000" + std::to_string(i) + "-0000-0000-0000-000000000000";
    out[i].pci_bus_id = "00000000:1" + std::to_string(i) + ":00.0";
  }
  out[3].uuid.reset();  // matched by its PCI address only
  return out;
}

fs::path make_run_db(const TempDir& dir, const std::string& name = "run.db") {
  RunInfo run;
  run.command = {"python", "train.py"};
  run.host = "node1";
  run.start_wall_ns = kStartWall;
  run.start_mono_ns = kStartMono;
  const fs::path path = dir.file(name);
  auto created = store::create_run_file(path, false, run, gpus());
  store::close_run_file(*created.db, path);
  return path;
}

DeviceRecord uuid_device(std::uint32_t cuda_device, std::uint8_t gpu) {
  DeviceRecord d{};
  d.cuda_device = cuda_device;
  d.flags = kDeviceHasUuid;
  d.uuid[3] = gpu;  // GPU-0000000<gpu>-...
  return d;
}

KernelRecord kernel(std::uint64_t start, std::uint64_t duration, std::uint32_t device,
                    std::uint32_t name_id, std::uint32_t stream = 7) {
  KernelRecord k{};
  k.start = start;
  k.end = start + duration;
  k.cuda_device = device;
  k.stream_id = stream;
  k.correlation_id = 11;
  k.name_id = name_id;
  k.grid[0] = 64;
  k.block[0] = 128;
  k.registers_per_thread = 40;
  k.dynamic_shared_bytes = 1024;
  return k;
}

ProcessRecord process(std::int64_t pid, TimestampSource source) {
  ProcessRecord p{};
  p.pid = pid;
  p.parent_pid = 1;
  p.cupti_version = 130001;
  p.timestamp_source = static_cast<std::uint32_t>(source);
  std::strcpy(p.host, "node1");
  return p;
}

// Worker 1 (CUDA_VISIBLE_DEVICES=2,3): monotonic clock; CUDA 0 = GPU 2, CUDA 1 = GPU 3 (PCI).
void write_worker1(const fs::path& dir) {
  SidecarFile f;
  ASSERT_TRUE(f.open(dir, "node1", 101));
  SidecarBatch b;
  b.add(RecordType::Process, process(101, TimestampSource::Monotonic), "torchrun-worker");
  b.add(RecordType::Calibration, CalibrationRecord{0, kStartMono, kStartWall, 0, 50});
  b.add(RecordType::Device, uuid_device(0, 2), "NVIDIA H100");
  DeviceRecord pci{};
  pci.cuda_device = 1;
  pci.flags = kDeviceHasPci;
  pci.pci_bus = 0x13;
  b.add(RecordType::Device, pci);
  b.add(RecordType::Name, NameRecord{1, 0}, "_Z4gemmIfEviPKT_");
  b.add(RecordType::Name, NameRecord{2, 0}, "_Z11relu_kernelPf");
  const auto t = static_cast<std::uint64_t>(kStartMono);
  b.add(RecordType::Kernel, kernel(t + 1000, 100, 0, 1));
  b.add(RecordType::Kernel, kernel(t + 2000, 300, 0, 2));
  b.add(RecordType::Kernel, kernel(t + 3000, 200, 1, 1, 9));
  MemcpyRecord copy{};
  copy.start = t + 500;
  copy.end = t + 900;
  copy.bytes = 4096;
  copy.copy_kind = 1;
  copy.stream_id = 7;
  b.add(RecordType::Memcpy, copy);
  MemsetRecord set{};
  set.start = t + 950;
  set.end = t + 960;
  set.bytes = 64;
  set.value = 255;
  b.add(RecordType::Memset, set);
  b.add(RecordType::End, EndRecord{kStartMono + 10'000});
  ASSERT_TRUE(f.append(b));
}

// Worker 2: CUPTI's own clock (realtime), killed before the end (no end record), a GPU that
// was not sampled, its own name numbering.
void write_worker2(const fs::path& dir) {
  SidecarFile f;
  ASSERT_TRUE(f.open(dir, "node1", 102));
  SidecarBatch b;
  b.add(RecordType::Process, process(102, TimestampSource::CuptiDefault), "worker2");
  // CUPTI's clock = wall clock here: cupti kStartWall ↔ mono kStartMono.
  b.add(RecordType::Calibration,
        CalibrationRecord{static_cast<std::uint64_t>(kStartWall), kStartMono, kStartWall, 0, 50});
  b.add(RecordType::Device, uuid_device(0, 1), "NVIDIA H100");
  b.add(RecordType::Device, uuid_device(1, 9), "a GPU not sampled");
  b.add(RecordType::Name, NameRecord{1, 0}, "_Z11relu_kernelPf");  // id 1 here is relu
  const auto w = static_cast<std::uint64_t>(kStartWall);
  b.add(RecordType::Kernel, kernel(w + 4000, 500, 0, 1));
  b.add(RecordType::Kernel, kernel(w + 5000, 50, 1, 1));
  b.add(RecordType::Dropped, DroppedRecord{2});
  ASSERT_TRUE(f.append(b));
}

class TraceImport : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = make_run_db(dir_);
    trace_ = dir_.file("run.db.trace");
    fs::create_directories(trace_);
    write_worker1(trace_);
    write_worker2(trace_);
  }
  ImportSummary import() {
    ImportOptions options;
    options.wall_minus_mono_ns = kStartWall - kStartMono;
    return import_trace_dir(trace_, db_, 1, gpus(), options);
  }
  TempDir dir_;
  fs::path db_;
  fs::path trace_;
};

TEST_F(TraceImport, ProcessesDevicesKernelsAndProblems) {
  const ImportSummary s = import();
  EXPECT_EQ(s.files, 2);
  EXPECT_EQ(s.kernels, 5);
  EXPECT_EQ(s.memory_ops, 2);
  EXPECT_EQ(s.unmatched, 1);
  EXPECT_FALSE(fs::exists(trace_)) << "imported files and their directory are removed";

  const auto reader = store::KernelTraceReader::open(db_);
  ASSERT_TRUE(reader.has_trace_tables());
  const auto processes = reader.processes(1);
  ASSERT_EQ(processes.size(), 2u);
  EXPECT_EQ(processes[0].pid, 101);
  EXPECT_EQ(processes[0].clock, "monotonic");
  EXPECT_TRUE(processes[0].complete);
  EXPECT_TRUE(processes[0].problems.empty());
  EXPECT_EQ(processes[0].kernels, 3);
  EXPECT_EQ(processes[0].memory_ops, 2);
  EXPECT_EQ(processes[1].pid, 102);
  EXPECT_EQ(processes[1].clock, "calibrated");
  EXPECT_FALSE(processes[1].complete);
  EXPECT_EQ(processes[1].dropped_records, 2);
  EXPECT_EQ(processes[1].command, "worker2");
  std::string all;
  for (const auto& p : processes[1].problems) all += p + "\n";
  EXPECT_NE(all.find("did not end normally"), std::string::npos) << all;
  EXPECT_NE(all.find("dropped 2"), std::string::npos) << all;
  EXPECT_NE(all.find("did not sample"), std::string::npos) << all;
  EXPECT_EQ(s.problems.size(), processes[1].problems.size());

  // CUDA devices: by UUID (0 → GPU 2, worker 2's 0 → GPU 1), by PCI (1 → GPU 3), unmatched.
  const auto devices = reader.devices(1);
  ASSERT_EQ(devices.size(), 4u);
  EXPECT_EQ(devices[0].device_index, 2u);
  EXPECT_EQ(devices[0].uuid, "GPU-00000002-0000-0000-0000-000000000000");
  EXPECT_EQ(devices[1].device_index, 3u);
  EXPECT_EQ(devices[1].pci_bus_id, "00000000:13:00.0");
  EXPECT_EQ(devices[2].device_index, 1u);
  EXPECT_FALSE(devices[3].device_index.has_value());

  // One id per name across processes, demangled and shortened.
  const auto names = reader.names(1);
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0].name, "_Z4gemmIfEviPKT_");
  EXPECT_EQ(names[0].demangled, "void gemm<float>(int, float const*)");
  EXPECT_EQ(names[0].short_name, "gemm");
  EXPECT_EQ(names[1].demangled, "relu_kernel(float*)");

  std::vector<TraceKernel> kernels;
  reader.for_each_kernel(1, store::TraceOrder::ByStart,
                         [&](const TraceKernel& k) { kernels.push_back(k); });
  ASSERT_EQ(kernels.size(), 5u);
  EXPECT_EQ(kernels[0].times.start_mono_ns, kStartMono + 1000);
  EXPECT_EQ(kernels[0].times.end_mono_ns, kStartMono + 1100);
  EXPECT_EQ(kernels[0].times.start_wall_ns, kStartWall + 1000);
  EXPECT_EQ(kernels[0].place.device_index, 2u);
  EXPECT_EQ(kernels[0].name_id, names[0].name_id);
  EXPECT_EQ(kernels[0].grid[0], 64);
  EXPECT_EQ(kernels[0].block[0], 128);
  EXPECT_EQ(kernels[0].registers_per_thread, 40);
  EXPECT_EQ(kernels[0].dynamic_shared_bytes, 1024);
  EXPECT_EQ(kernels[2].place.device_index, 3u);
  EXPECT_EQ(kernels[2].place.stream_id, 9u);
  // Worker 2's calibrated times: cupti kStartWall + 4000 → mono kStartMono + 4000.
  EXPECT_EQ(kernels[3].times.start_mono_ns, kStartMono + 4000);
  EXPECT_EQ(kernels[3].times.duration_ns(), 500);
  EXPECT_EQ(kernels[3].place.device_index, 1u);
  EXPECT_EQ(kernels[3].name_id, names[1].name_id);  // relu, though worker 2 numbered it 1
  EXPECT_FALSE(kernels[4].place.device_index.has_value());

  std::vector<TraceMemoryOp> ops;
  reader.for_each_memory_op(1, store::TraceOrder::ByStart,
                            [&](const TraceMemoryOp& m) { ops.push_back(m); });
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_FALSE(ops[0].memset);
  EXPECT_EQ(ops[0].copy_kind, 1);
  EXPECT_EQ(ops[0].bytes, 4096);
  EXPECT_EQ(ops[0].times.duration_ns(), 400);
  EXPECT_TRUE(ops[1].memset);
  EXPECT_EQ(ops[1].value, 255);

  // The run's problems carry the import's sentences.
  store::Database db(db_, SQLITE_OPEN_READONLY);
  store::Statement problems = db.prepare("SELECT problems FROM runs WHERE run_id = 1");
  ASSERT_TRUE(problems.step());
  EXPECT_NE(problems.text(0).find("did not end normally"), std::string::npos);
}

TEST_F(TraceImport, KernelsSummaryOfTheRunDatabase) {
  import();
  ASSERT_TRUE(kernels::is_run_database(db_));
  const auto reports = kernels::read_run_database(db_, kernels::NameColumn::Demangled);
  ASSERT_EQ(reports.size(), 1u);
  const auto rows = kernels::kernel_summary(reports[0].kernels);
  ASSERT_EQ(rows.size(), 2u);
  // relu: 300 + 500 + 50 = 850 ns of 1150; gemm: 100 + 200.
  EXPECT_EQ(rows[0].name, "relu_kernel(float*)");
  EXPECT_EQ(rows[0].stats.count, 3);
  EXPECT_EQ(rows[0].stats.total_ns, 850);
  EXPECT_EQ(rows[0].stats.median_ns, 300);
  EXPECT_NEAR(rows[0].time_percent, 100.0 * 850 / 1150, 1e-9);
  EXPECT_EQ(rows[1].name, "void gemm<float>(int, float const*)");
  EXPECT_EQ(rows[1].stats.total_ns, 300);
  const auto memory = kernels::memory_summary(reports[0].memory);
  ASSERT_EQ(memory.size(), 2u);
  EXPECT_EQ(memory[0].operation, "[CUDA memcpy Host-to-Device]");
  EXPECT_EQ(memory[0].total_bytes, 4096);
  EXPECT_EQ(memory[1].operation, "[CUDA memset]");
  const auto short_names = kernels::read_run_database(db_, kernels::NameColumn::ShortName);
  EXPECT_EQ(short_names[0].kernels.count("gemm"), 1u);
  // Problems of the trace become notes.
  bool noted = false;
  for (const auto& note : reports[0].notes) noted |= note.find("dropped 2") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST_F(TraceImport, MergeKeepsTheTrace) {
  import();
  TempDir other;
  const fs::path second = make_run_db(other, "rank1.db");
  {
    // A second rank: a different host, so merge takes it as another run.
    store::Database db(second, SQLITE_OPEN_READWRITE);
    db.exec("UPDATE runs SET host = 'node2'");
  }
  const fs::path merged = dir_.file("merged.db");
  store::merge(merged, {second, db_}, false);
  const auto reader = store::KernelTraceReader::open(merged);
  EXPECT_EQ(reader.count_kernels(1), 0);
  EXPECT_EQ(reader.count_kernels(2), 5);
  EXPECT_EQ(reader.count_memory_ops(2), 2);
  EXPECT_EQ(reader.processes(2).size(), 2u);
  EXPECT_EQ(reader.names(2).size(), 2u);
  EXPECT_EQ(reader.devices(2).size(), 4u);
  // One report per run; the first has no trace.
  const auto reports = kernels::read_run_database(merged, kernels::NameColumn::Demangled);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_TRUE(reports[0].kernels.empty());
  EXPECT_EQ(reports[1].kernels.size(), 2u);
  EXPECT_NE(reports[1].file.string().find("node1"), std::string::npos);
}

TEST_F(TraceImport, AddsTheTablesToAnOlderFile) {
  // Make it a 1.1 file: no trace tables, minor version 1.
  gpuscope::testing::downgrade_schema(
      db_, {1, {"trace_processes", "cuda_devices", "kernel_names", "kernels", "memory_ops"}, {}});
  {
    store::Database db(db_, SQLITE_OPEN_READONLY);
    EXPECT_FALSE(store::has_kernel_tables(db));
  }
  EXPECT_EQ(import().kernels, 5);
  store::Database db(db_, SQLITE_OPEN_READONLY);
  EXPECT_TRUE(store::has_kernel_tables(db));
  EXPECT_EQ(store::schema_minor_version(db), store::kSchemaMinorVersion);
}

TEST_F(TraceImport, ADamagedFileIsSkippedAndSaid) {
  std::FILE* f = std::fopen((trace_ / "junk.0.0.gstrace").c_str(), "w");
  std::fputs("not a trace", f);
  std::fclose(f);
  const ImportSummary s = import();
  EXPECT_EQ(s.files, 2);
  bool said = false;
  for (const auto& p : s.problems) said |= p.find("not a gpuscope trace file") != std::string::npos;
  EXPECT_TRUE(said);
  // The skipped file stays for a person to look at.
  EXPECT_TRUE(fs::exists(trace_ / "junk.0.0.gstrace"));
}

TEST(TraceImportEmpty, NoProcessTracedIsAProblemNotAnError) {
  TempDir dir;
  const fs::path db = make_run_db(dir);
  const ImportSummary s = import_trace_dir(dir.file("run.db.trace"), db, 1, gpus());
  EXPECT_EQ(s.files, 0);
  ASSERT_EQ(s.problems.size(), 1u);
  EXPECT_NE(s.problems[0].find("no CUDA process"), std::string::npos);
}

TEST(TraceImportEmpty, NotARunDatabaseIsAnError) {
  TempDir dir;
  const std::string path = dir.file("x.db");
  {
    store::Database db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    db.exec("CREATE TABLE t (a)");
  }
  EXPECT_THROW(import_trace_dir(dir.file("t"), path, 1, gpus()), Error);
}

}  // namespace
}  // namespace gpuscope::trace
