// The record processing of libgpuscope_cupti.so on CUPTI activity buffers built by hand
// (tests/trace/cupti_buffers.hpp), walked by the real cuptiActivityGetNextRecord: every field
// gpuscope keeps comes out of the sidecar file as it went into the CUPTI record.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/temp_dir.hpp"
#include "trace/cupti/activity_records.hpp"
#include "trace/cupti_buffers.hpp"
#include "trace/sidecar_reader.hpp"
#include "trace/sidecar_writer.hpp"

namespace gpuscope::trace {
namespace {

using gpuscope::testing::TempDir;
using testing::CuptiBuffer;

struct Collected : ActivityVisitor {
  std::vector<KernelRecord> kernels;
  std::vector<MemcpyRecord> memcpys;
  std::vector<MemsetRecord> memsets;
  std::vector<MarkerRecord> markers;
  void kernel(const KernelRecord& r) override { kernels.push_back(r); }
  void marker(const MarkerRecord& r) override { markers.push_back(r); }
  void memcpy(const MemcpyRecord& r) override { memcpys.push_back(r); }
  void memset(const MemsetRecord& r) override { memsets.push_back(r); }
};

// Writes the batch to a sidecar file and reads it back.
std::filesystem::path to_file(const TempDir& dir, const SidecarBatch& batch) {
  SidecarFile file;
  EXPECT_TRUE(file.open(dir.path(), "test", 1));
  EXPECT_TRUE(file.append(batch));
  return file.path();
}

constexpr std::uint8_t kUuid[16] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

// NVTX markers (push/pop and start/end ranges, an instant, a sync marker that is no phase) and
// their data, walked by the real cuptiActivityGetNextRecord.
TEST(CuptiRecords, NvtxMarkersAndTheirData) {
  CuptiBuffer buffer;
  testing::add_marker(buffer, CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 1000, "step", nullptr, 77, 78);
  testing::add_marker_data(buffer, 1, 3, 0xff00ff00);
  testing::add_marker(buffer, CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 1100, "nccl:all_reduce", "NCCL",
                      77, 79);
  testing::add_marker(buffer, CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 1500, nullptr, nullptr, 77, 79);
  testing::add_marker(buffer, CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 3, 1600, "saved", nullptr,
                      77, 78);
  testing::add_marker(buffer, CUPTI_ACTIVITY_FLAG_MARKER_SYNC_ACQUIRE, 4, 1700, "lock", nullptr, 77,
                      78);
  testing::add_marker(buffer, CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 2000, nullptr, nullptr, 77, 78);
  cupti::ActivityProcessor processor;
  SidecarBatch batch;
  processor.process_buffer(buffer.data(), buffer.used(), batch);
  EXPECT_EQ(processor.counts().markers, 5u);
  EXPECT_EQ(processor.counts().other, 1u);  // the sync marker

  TempDir dir;
  const auto path = to_file(dir, batch);
  const SidecarMeta meta = read_sidecar_meta(path);
  EXPECT_EQ(meta.markers, 5);
  ASSERT_EQ(meta.marker_names.size(), 4u);  // step, nccl:all_reduce, NCCL, saved
  ASSERT_EQ(meta.marker_data.count(1), 1u);
  EXPECT_EQ(meta.marker_data.at(1).category, 3u);
  EXPECT_EQ(meta.marker_data.at(1).color, 0xff00ff00u);
  EXPECT_EQ(meta.marker_data.at(1).color_set, 1u);
  Collected got;
  for_each_activity(path, got);
  ASSERT_EQ(got.markers.size(), 5u);
  const MarkerRecord& step = got.markers[0];
  EXPECT_EQ(step.flags, kMarkerStart);
  EXPECT_EQ(step.timestamp, 1000u);
  EXPECT_EQ(step.id, 1u);
  EXPECT_EQ(step.process_id, 77u);
  EXPECT_EQ(step.thread_id, 78u);
  EXPECT_EQ(meta.marker_names.at(step.name_id), "step");
  EXPECT_EQ(step.domain_id, 0u);  // NVTX's default domain
  const MarkerRecord& nccl = got.markers[1];
  EXPECT_EQ(meta.marker_names.at(nccl.name_id), "nccl:all_reduce");
  EXPECT_EQ(meta.marker_names.at(nccl.domain_id), "NCCL");
  EXPECT_EQ(got.markers[2].flags, kMarkerEnd);
  EXPECT_EQ(got.markers[2].name_id, 0u);
  EXPECT_EQ(got.markers[3].flags, kMarkerInstant);
  EXPECT_EQ(got.markers[4].id, 1u);
}

TEST(CuptiRecords, KernelsMemcpyMemsetAndDevices) {
  CuptiBuffer buffer;
  testing::add_device(buffer, 0, kUuid, "NVIDIA H100 80GB HBM3");
  testing::add_kernel(buffer, "_Z4gemmIfEviPKT_", 1000, 1600, 0, 7);
  testing::add_memcpy(buffer, 2000, 2500, 1 << 20, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 0);
  testing::add_kernel(buffer, "_Z11relu_kernelPf", 3000, 3100, 0, 13);
  testing::add_memset(buffer, 4000, 4050, 256, 0);
  testing::add_kernel(buffer, "_Z4gemmIfEviPKT_", 5000, 5200, 0, 7);

  cupti::ActivityProcessor processor;
  SidecarBatch batch;
  processor.process_buffer(buffer.data(), buffer.used(), batch);
  EXPECT_EQ(processor.counts().kernels, 3u);
  EXPECT_EQ(processor.counts().memcpys, 1u);
  EXPECT_EQ(processor.counts().memsets, 1u);
  EXPECT_EQ(processor.counts().devices, 1u);
  EXPECT_EQ(processor.counts().other, 0u);

  TempDir dir;
  const auto path = to_file(dir, batch);
  const SidecarMeta meta = read_sidecar_meta(path);
  EXPECT_FALSE(meta.truncated);
  ASSERT_EQ(meta.names.size(), 2u) << "one name record per distinct name";
  EXPECT_EQ(meta.names.at(1), "_Z4gemmIfEviPKT_");
  EXPECT_EQ(meta.names.at(2), "_Z11relu_kernelPf");
  ASSERT_EQ(meta.devices.size(), 1u);
  const SidecarDevice& device = meta.devices.at(0);
  ASSERT_TRUE(device.uuid.has_value());
  EXPECT_EQ((*device.uuid)[0], 0xde);
  EXPECT_EQ((*device.uuid)[15], 12);
  EXPECT_EQ(device.name, "NVIDIA H100 80GB HBM3");

  Collected c;
  for_each_activity(path, c);
  ASSERT_EQ(c.kernels.size(), 3u);
  const KernelRecord& k = c.kernels[0];
  EXPECT_EQ(k.start, 1000u);
  EXPECT_EQ(k.end, 1600u);
  EXPECT_EQ(k.cuda_device, 0u);
  EXPECT_EQ(k.context_id, 1u);
  EXPECT_EQ(k.stream_id, 7u);
  EXPECT_EQ(k.correlation_id, 42u);
  EXPECT_EQ(k.grid[0], 108);
  EXPECT_EQ(k.grid[1], 2);
  EXPECT_EQ(k.block[0], 256);
  EXPECT_EQ(k.registers_per_thread, 64u);
  EXPECT_EQ(k.static_shared_bytes, 4096);
  EXPECT_EQ(k.dynamic_shared_bytes, 8192);
  EXPECT_EQ(k.name_id, 1u);
  EXPECT_EQ(c.kernels[1].name_id, 2u);
  EXPECT_EQ(c.kernels[1].stream_id, 13u);
  EXPECT_EQ(c.kernels[2].name_id, 1u);
  ASSERT_EQ(c.memcpys.size(), 1u);
  EXPECT_EQ(c.memcpys[0].bytes, 1u << 20);
  EXPECT_EQ(c.memcpys[0].copy_kind, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
  EXPECT_EQ(c.memcpys[0].src_kind, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
  EXPECT_EQ(c.memcpys[0].correlation_id, 43u);
  ASSERT_EQ(c.memsets.size(), 1u);
  EXPECT_EQ(c.memsets[0].bytes, 256u);
  EXPECT_EQ(c.memsets[0].end - c.memsets[0].start, 50u);
}

TEST(CuptiRecords, NamesAreWrittenOncePerProcess) {
  cupti::ActivityProcessor processor;
  SidecarBatch batch;
  for (int i = 0; i < 3; ++i) {
    CuptiBuffer buffer;
    testing::add_kernel(buffer, "_Z4gemmIfEviPKT_", 1000 + 10 * static_cast<unsigned>(i),
                        1005 + 10 * static_cast<unsigned>(i), 0, 7);
    processor.process_buffer(buffer.data(), buffer.used(), batch);
  }
  TempDir dir;
  const SidecarMeta meta = read_sidecar_meta(to_file(dir, batch));
  EXPECT_EQ(meta.kernels, 3);
  EXPECT_EQ(meta.names.size(), 1u);
  EXPECT_EQ(processor.counts().buffers, 3u);
}

TEST(CuptiRecords, UntimedAndOtherRecordsAreLeftOut) {
  CuptiBuffer buffer;
  testing::add_kernel(buffer, "k", 0, 0, 0, 7);  // no timing: device memory ran out
  auto& api = buffer.add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  api.start = 1;
  api.end = 2;
  auto& hidden = testing::add_device(buffer, 5, kUuid, "hidden by CUDA_VISIBLE_DEVICES");
  hidden.isCudaVisible = 0;
  testing::add_kernel(buffer, "k", 10, 20, 0, 7);
  cupti::ActivityProcessor processor;
  SidecarBatch batch;
  processor.process_buffer(buffer.data(), buffer.used(), batch);
  EXPECT_EQ(processor.counts().kernels, 1u);
  EXPECT_EQ(processor.counts().untimed, 1u);
  EXPECT_EQ(processor.counts().other, 1u);
  TempDir dir;
  const SidecarMeta meta = read_sidecar_meta(to_file(dir, batch));
  EXPECT_EQ(meta.kernels, 1);
  EXPECT_TRUE(meta.devices.empty());
}

TEST(CuptiRecords, EmptyBuffer) {
  cupti::ActivityProcessor processor;
  SidecarBatch batch;
  CuptiBuffer buffer;
  processor.process_buffer(buffer.data(), 0, batch);
  processor.process_buffer(nullptr, 0, batch);
  EXPECT_TRUE(batch.empty());
}

}  // namespace
}  // namespace gpuscope::trace
