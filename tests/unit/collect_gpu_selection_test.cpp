// Choosing GPUs from --gpus and from the job's environment.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "collect/gpu_selection.hpp"

namespace gpuscope::collect {
namespace {

std::vector<DeviceDescription> four_gpus() {
  std::vector<DeviceDescription> devices(4);
  const char* uuids[] = {
      "GPU-aaaa1111-0000-0000-0000-000000000000", "GPU-bbbb2222-0000-0000-0000-000000000000",
      "GPU-bbbb3333-0000-0000-0000-000000000000", "GPU-dddd4444-0000-0000-0000-000000000000"};
  for (unsigned i = 0; i < 4; ++i) {
    devices[i].index = i;
    devices[i].uuid = uuids[i];
  }
  return devices;
}

MigResolver mig_on_gpu(unsigned parent) {
  return [parent](const std::string& uuid) -> std::optional<unsigned> {
    if (uuid == "MIG-1234") return parent;
    return std::nullopt;
  };
}

TEST(GpuSelection, IndicesInOrderWithoutDuplicates) {
  auto s = select_gpus("2, 0,2", four_gpus(), {});
  EXPECT_EQ(s.indices, (std::vector<unsigned>{2, 0}));
}

TEST(GpuSelection, AllSelectsEveryGpu) {
  EXPECT_EQ(select_gpus("all", four_gpus(), {}).indices.size(), 4U);
}

TEST(GpuSelection, UuidAndUniquePrefix) {
  auto s = select_gpus("GPU-dddd4444-0000-0000-0000-000000000000,GPU-aaaa", four_gpus(), {});
  EXPECT_EQ(s.indices, (std::vector<unsigned>{3, 0}));
}

TEST(GpuSelection, AmbiguousPrefixIsRefused) {
  EXPECT_THROW(select_gpus("GPU-bbbb", four_gpus(), {}), Error);
}

TEST(GpuSelection, MissingGpuIsAUsageErrorNamingIt) {
  try {
    select_gpus("0,7", four_gpus(), {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find("GPU 7 does not exist"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("0-3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(select_gpus("GPU-ffff", four_gpus(), {}), Error);
  EXPECT_THROW(select_gpus("banana", four_gpus(), {}), Error);
}

TEST(GpuSelection, MigInstanceSelectsItsParent) {
  auto s = select_gpus("MIG-1234", four_gpus(), mig_on_gpu(1));
  EXPECT_EQ(s.indices, (std::vector<unsigned>{1}));
  ASSERT_FALSE(s.notes.empty());
  EXPECT_THROW(select_gpus("MIG-9999", four_gpus(), mig_on_gpu(1)), Error);
}

// Four GPUs, GPU 1 in MIG mode with GPU instances 1 and 7, GPU 3 in MIG mode with GI 2; their
// MIG devices after the GPUs, as describe_system lists them.
std::vector<DeviceDescription> gpus_with_mig() {
  auto devices = four_gpus();
  const std::pair<unsigned, unsigned> instances[] = {{1, 1}, {1, 7}, {3, 2}};
  for (const auto& [parent, gi] : instances) {
    DeviceDescription d;
    d.index = mig_device_index(parent, gi);
    d.uuid = fmt::format("MIG-{}{}", parent, gi);
    MigIdentity mig;
    mig.parent_index = parent;
    mig.gpu_instance_id = gi;
    d.mig = mig;
    devices.push_back(d);
  }
  devices[1].mig_enabled = true;
  devices[3].mig_enabled = true;
  return devices;
}

TEST(GpuSelection, AWholeGpuInMigModeBringsItsMigDevices) {
  const auto devices = gpus_with_mig();
  auto all = select_gpus("all", devices, {});
  EXPECT_EQ(all.indices, (std::vector<unsigned>{0, 1, 2, 3}));
  EXPECT_EQ(all.instances, (std::vector<unsigned>{1101, 1107, 1302}));
  EXPECT_EQ(all.rows(), (std::vector<unsigned>{0, 1, 2, 3, 1101, 1107, 1302}));
  ASSERT_EQ(all.mig_notes.size(), 1U);
  EXPECT_EQ(all.mig_notes[0],
            "GPUs 1, 3 are in MIG mode: 3 MIG devices on them are sampled too, each as a device "
            "of its own (gpuscope devices lists them; docs/mig.md)");
  auto one = select_gpus("1", devices, {});
  EXPECT_EQ(one.indices, (std::vector<unsigned>{1}));
  EXPECT_EQ(one.instances, (std::vector<unsigned>{1101, 1107}));
  ASSERT_EQ(one.mig_notes.size(), 1U);
  EXPECT_EQ(one.mig_notes[0],
            "GPU 1 is in MIG mode: 2 MIG devices on it are sampled too, each as a device of its "
            "own (gpuscope devices lists them; docs/mig.md)");
  auto by_uuid = select_gpus("GPU-dddd4444-0000-0000-0000-000000000000", devices, {});
  EXPECT_EQ(by_uuid.instances, (std::vector<unsigned>{1302}));
  // Indices count GPUs only: 4 is none, whatever follows the GPUs in the list.
  EXPECT_THROW(select_gpus("4", devices, {}), Error);
  EXPECT_TRUE(select_gpus("0", devices, {}).instances.empty());
  EXPECT_TRUE(select_gpus("0", devices, {}).mig_notes.empty());
}

TEST(GpuSelection, AMigUuidSamplesThatDeviceAndItsParentOnly) {
  const auto devices = gpus_with_mig();
  auto s = select_gpus("MIG-17", devices, mig_on_gpu(0));
  EXPECT_EQ(s.indices, (std::vector<unsigned>{1}));
  EXPECT_EQ(s.instances, (std::vector<unsigned>{1107}));
  EXPECT_TRUE(s.notes.empty());
  ASSERT_EQ(s.mig_notes.size(), 1U);
  EXPECT_NE(s.mig_notes[0].find("MIG-17 is MIG device GPU 1 GI 7"), std::string::npos)
      << s.mig_notes[0];
  EXPECT_NE(s.mig_notes[0].find("other MIG devices are not sampled"), std::string::npos);
  // Two of them, and the GPU whole: no duplicates.
  auto more = select_gpus("MIG-17,MIG-11,1", devices, {});
  EXPECT_EQ(more.indices, (std::vector<unsigned>{1}));
  EXPECT_EQ(more.instances, (std::vector<unsigned>{1107, 1101}));
  try {
    select_gpus("MIG-99", devices, {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find("no GPU has the MIG device MIG-99"), std::string::npos);
  }
}

// The CUDA 11.0 form, MIG-GPU-<GPU UUID>/<GI id>/<CI id>, names the same MIG device.
TEST(GpuSelection, TheCuda11MigFormNamesTheSameDevice) {
  const auto devices = gpus_with_mig();
  const std::string gpu3 = *devices[3].uuid;
  auto s = select_gpus(fmt::format("MIG-{}/2/0", gpu3), devices, {});
  EXPECT_EQ(s.indices, (std::vector<unsigned>{3}));
  EXPECT_EQ(s.instances, (std::vector<unsigned>{1302}));
  // An instance the GPU does not have, or a malformed tail, is the usual usage error.
  EXPECT_THROW(select_gpus(fmt::format("MIG-{}/5/0", gpu3), devices, {}), Error);
  EXPECT_THROW(select_gpus(fmt::format("MIG-{}/x/0", gpu3), devices, {}), Error);
  EXPECT_THROW(select_gpus(fmt::format("MIG-{}", gpu3), devices, {}), Error);
}

TEST(GpuSelection, DeviceAtFindsGpusAndMigDevices) {
  const auto devices = gpus_with_mig();
  EXPECT_EQ(device_at(devices, 2).uuid, devices[2].uuid);
  EXPECT_EQ(device_at(devices, 1107).uuid, "MIG-17");
  EXPECT_THROW(device_at(devices, 1108), std::out_of_range);
}

TEST(GpuSelection, EmptyListSelectsNothing) {
  EXPECT_TRUE(select_gpus("", four_gpus(), {}).indices.empty());
  EXPECT_TRUE(select_visible_gpus("-1", "CUDA_VISIBLE_DEVICES", four_gpus(), {}).indices.empty());
}

TEST(GpuSelection, GlobalSchedulerIndicesOnARestrictedViewSelectAllVisible) {
  const auto all = four_gpus();
  const std::vector<DeviceDescription> two(all.begin(), all.begin() + 2);
  auto s = select_visible_gpus("2,3", "SLURM_STEP_GPUS", two, {});
  EXPECT_EQ(s.indices, (std::vector<unsigned>{0, 1}));
  ASSERT_FALSE(s.notes.empty());
  EXPECT_NE(s.notes[0].find("SLURM_STEP_GPUS=2,3"), std::string::npos);
}

TEST(GpuSelection, VisibleListIsNotedWithItsSource) {
  auto s = select_visible_gpus("1,3", "CUDA_VISIBLE_DEVICES", four_gpus(), {});
  EXPECT_EQ(s.indices, (std::vector<unsigned>{1, 3}));
  EXPECT_NE(s.notes[0].find("CUDA_VISIBLE_DEVICES=1,3"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::collect
