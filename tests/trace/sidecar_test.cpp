// The sidecar file: what the injection library writes is what gpuscope reads back, and a file
// cut short keeps every whole record before the cut.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "support/temp_dir.hpp"
#include "trace/sidecar_reader.hpp"
#include "trace/sidecar_writer.hpp"

namespace gpuscope::trace {
namespace {

using gpuscope::testing::TempDir;
namespace fs = std::filesystem;

struct Collected : ActivityVisitor {
  std::vector<KernelRecord> kernels;
  std::vector<MemcpyRecord> memcpys;
  std::vector<MemsetRecord> memsets;
  void kernel(const KernelRecord& r) override { kernels.push_back(r); }
  void memcpy(const MemcpyRecord& r) override { memcpys.push_back(r); }
  void memset(const MemsetRecord& r) override { memsets.push_back(r); }
};

KernelRecord kernel_at(std::uint64_t start, std::uint32_t name_id) {
  KernelRecord k{};
  k.start = start;
  k.end = start + 100;
  k.cuda_device = 1;
  k.stream_id = 7;
  k.name_id = name_id;
  k.grid[0] = 128;
  k.block[0] = 256;
  k.registers_per_thread = 32;
  return k;
}

// A file as the library writes one: process, calibration, device, name, activity, end.
fs::path write_sample_file(const TempDir& dir) {
  SidecarFile file;
  EXPECT_TRUE(file.open(dir.path(), "node1", 4242)) << file.error();
  SidecarBatch batch;
  ProcessRecord process{};
  process.pid = 4242;
  process.parent_pid = 1;
  process.cupti_version = 130001;
  process.timestamp_source = static_cast<std::uint32_t>(TimestampSource::Monotonic);
  std::strcpy(process.host, "node1");
  batch.add(RecordType::Process, process, std::string_view("python\0train.py\0", 16));
  batch.add(RecordType::Calibration, CalibrationRecord{1000, 1000, 5000, 0, 10});
  DeviceRecord device{};
  device.cuda_device = 1;
  device.flags = kDeviceHasUuid;
  for (std::uint8_t i = 0; i < 16; ++i) device.uuid[i] = i;
  batch.add(RecordType::Device, device, "NVIDIA H100");
  batch.add(RecordType::Name, NameRecord{1, 0}, "_Z4gemmPf");
  batch.add(RecordType::Kernel, kernel_at(2000, 1));
  EXPECT_TRUE(file.append(batch));
  batch.clear();
  MemcpyRecord copy{};
  copy.start = 3000;
  copy.end = 3500;
  copy.bytes = 4096;
  copy.copy_kind = 1;
  batch.add(RecordType::Memcpy, copy);
  MemsetRecord set{};
  set.start = 4000;
  set.end = 4100;
  set.bytes = 64;
  set.value = 0;
  batch.add(RecordType::Memset, set);
  batch.add(RecordType::Dropped, DroppedRecord{3});
  batch.note("cuptiActivityEnable(MEMCPY2) failed: CUPTI_ERROR_NOT_SUPPORTED");
  batch.add(RecordType::Kernel, kernel_at(5000, 1));
  batch.add(RecordType::Calibration, CalibrationRecord{9000, 9000, 13000, 2, 10});
  batch.add(RecordType::End, EndRecord{9001});
  EXPECT_TRUE(file.append(batch));
  const fs::path path = file.path();
  file.close();
  return path;
}

TEST(Sidecar, RoundTrip) {
  TempDir dir;
  const fs::path path = write_sample_file(dir);
  EXPECT_EQ(path.filename().string(), "node1.4242.0.gstrace");
  EXPECT_EQ(sidecar_files(dir.path()), std::vector<fs::path>{path});

  const SidecarMeta meta = read_sidecar_meta(path);
  ASSERT_TRUE(meta.process.has_value());
  EXPECT_EQ(meta.process->pid, 4242);
  EXPECT_STREQ(meta.process->host, "node1");
  EXPECT_EQ(meta.command, "python train.py");
  ASSERT_EQ(meta.calibrations.size(), 2u);
  EXPECT_EQ(meta.calibrations[1].wall_ns, 13000);
  ASSERT_EQ(meta.devices.count(1), 1u);
  EXPECT_EQ(meta.devices.at(1).name, "NVIDIA H100");
  ASSERT_TRUE(meta.devices.at(1).uuid.has_value());
  EXPECT_EQ((*meta.devices.at(1).uuid)[15], 15);
  EXPECT_FALSE(meta.devices.at(1).pci.has_value());
  EXPECT_EQ(meta.names.at(1), "_Z4gemmPf");
  EXPECT_EQ(meta.kernels, 2);
  EXPECT_EQ(meta.memcpys, 1);
  EXPECT_EQ(meta.memsets, 1);
  EXPECT_EQ(meta.dropped, 3u);
  ASSERT_EQ(meta.notes.size(), 1u);
  EXPECT_NE(meta.notes[0].find("MEMCPY2"), std::string::npos);
  EXPECT_TRUE(meta.ended);
  EXPECT_FALSE(meta.truncated);

  Collected c;
  for_each_activity(path, c);
  ASSERT_EQ(c.kernels.size(), 2u);
  EXPECT_EQ(c.kernels[1].start, 5000u);
  EXPECT_EQ(c.kernels[0].grid[0], 128);
  EXPECT_EQ(c.kernels[0].registers_per_thread, 32u);
  ASSERT_EQ(c.memcpys.size(), 1u);
  EXPECT_EQ(c.memcpys[0].bytes, 4096u);
  ASSERT_EQ(c.memsets.size(), 1u);
  EXPECT_EQ(c.memsets[0].bytes, 64u);
}

TEST(Sidecar, CutShortKeepsWholeRecords) {
  TempDir dir;
  const fs::path path = write_sample_file(dir);
  const auto size = fs::file_size(path);
  // Cut inside the last records (the end record is 16 bytes, the calibration 40).
  fs::resize_file(path, size - 20);
  SidecarMeta meta = read_sidecar_meta(path);
  EXPECT_TRUE(meta.truncated);
  EXPECT_FALSE(meta.ended);
  EXPECT_EQ(meta.kernels, 2);
  EXPECT_EQ(meta.calibrations.size(), 1u);
  // A cut inside a record header.
  fs::resize_file(path, sizeof(FileHeader) + 4);
  meta = read_sidecar_meta(path);
  EXPECT_TRUE(meta.truncated);
  EXPECT_FALSE(meta.process.has_value());
}

TEST(Sidecar, UnknownRecordsAreSkipped) {
  TempDir dir;
  SidecarFile file;
  ASSERT_TRUE(file.open(dir.path(), "h", 1));
  SidecarBatch batch;
  const std::uint64_t payload[3] = {1, 2, 3};
  batch.add(static_cast<RecordType>(99), payload, sizeof(payload));
  batch.add(RecordType::Kernel, kernel_at(10, 1));
  ASSERT_TRUE(file.append(batch));
  const SidecarMeta meta = read_sidecar_meta(file.path());
  EXPECT_TRUE(meta.unknown_records);
  EXPECT_EQ(meta.kernels, 1);
  EXPECT_FALSE(meta.truncated);
}

TEST(Sidecar, TwoFilesOfOnePidGetTwoNames) {
  TempDir dir;
  SidecarFile a;
  SidecarFile b;
  ASSERT_TRUE(a.open(dir.path(), "h", 7));
  ASSERT_TRUE(b.open(dir.path(), "h", 7));
  EXPECT_NE(a.path(), b.path());
  EXPECT_EQ(sidecar_files(dir.path()).size(), 2u);
}

TEST(Sidecar, NotASidecarFile) {
  TempDir dir;
  const std::string path = dir.file("x.gstrace");
  std::ofstream(path) << "not a trace file at all";
  try {
    read_sidecar_meta(path);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is not a gpuscope trace file"), std::string::npos);
  }
  EXPECT_THROW(read_sidecar_meta(dir.file("missing.gstrace")), Error);
}

TEST(Sidecar, CannotCreateInMissingDirectory) {
  SidecarFile file;
  EXPECT_FALSE(file.open("/nonexistent/gpuscope-trace", "h", 1));
  EXPECT_NE(file.error().find("cannot create"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::trace
