// Choosing GPUs from --gpus and from the job's environment.
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
