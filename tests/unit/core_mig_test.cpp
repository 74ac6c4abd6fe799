#include <gtest/gtest.h>

#include "core/mig.hpp"

namespace gpuscope {
namespace {

TEST(CoreMig, ProfileComesFromNvmlsName) {
  EXPECT_EQ(mig_profile_from_name("NVIDIA H100 80GB HBM3 MIG 1g.10gb"), "1g.10gb");
  EXPECT_EQ(mig_profile_from_name("NVIDIA A100-SXM4-80GB MIG 3g.40gb"), "3g.40gb");
  EXPECT_EQ(mig_profile_from_name("NVIDIA H200 MIG 1g.18gb+me"), "1g.18gb+me");
  EXPECT_EQ(mig_profile_from_name("NVIDIA A100-SXM4-40GB MIG 1c.3g.20gb"), "1c.3g.20gb");
  EXPECT_EQ(mig_profile_from_name("NVIDIA H100 80GB HBM3 MIG 7g.80gb"), "7g.80gb");
}

TEST(CoreMig, NamesWithoutAProfileGiveNone) {
  EXPECT_FALSE(mig_profile_from_name("NVIDIA H100 80GB HBM3"));
  EXPECT_FALSE(mig_profile_from_name("NVIDIA H100 MIG"));
  EXPECT_FALSE(mig_profile_from_name("NVIDIA H100 MIG 1g"));
  EXPECT_FALSE(mig_profile_from_name("NVIDIA H100 MIG 1g.10"));
  EXPECT_FALSE(mig_profile_from_name("NVIDIA H100 MIG g.10gb"));
  EXPECT_FALSE(mig_profile_from_name("NVIDIA H100 MIG 1g.10gbx"));
  EXPECT_FALSE(mig_profile_from_name(""));
}

TEST(CoreMig, RowIndicesStayApartFromGpus) {
  EXPECT_EQ(mig_device_index(0, 3), 1003U);
  EXPECT_EQ(mig_device_index(7, 13), 1713U);
  EXPECT_TRUE(is_mig_device_index(1003));
  EXPECT_FALSE(is_mig_device_index(7));
  EXPECT_FALSE(is_mig_device_index(999));
  EXPECT_TRUE(is_mig_device_index(mig_device_index(89, 99)));
  // An instance known only by DCGM's entity id is not read as GPU p's instance g.
  EXPECT_EQ(dcgm_instance_device_index(7), 10007U);
  EXPECT_FALSE(is_mig_device_index(dcgm_instance_device_index(7)));
  EXPECT_TRUE(is_dcgm_instance_device_index(10007));
  EXPECT_FALSE(is_dcgm_instance_device_index(1007));
}

TEST(CoreMig, RowIndexLabels) {
  EXPECT_EQ(device_index_label(3), "GPU 3");
  EXPECT_EQ(device_index_label(mig_device_index(0, 7)), "GPU 0 GI 7");
  EXPECT_EQ(device_index_label(mig_device_index(12, 13)), "GPU 12 GI 13");
  EXPECT_EQ(device_index_label(dcgm_instance_device_index(7)), "DCGM GPU instance 7");
}

TEST(CoreMig, LabelNamesParentInstanceAndProfile) {
  MigIdentity mig;
  mig.parent_index = 1;
  mig.gpu_instance_id = 9;
  EXPECT_EQ(mig_label(mig), "GPU 1 GI 9");
  mig.profile = "1g.18gb";
  EXPECT_EQ(mig_label(mig), "GPU 1 GI 9 (1g.18gb)");
}

}  // namespace
}  // namespace gpuscope
