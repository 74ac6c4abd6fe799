// dcgm/abi.hpp: the layouts are checked at compile time (static_assert); here, what a backend
// relies on at run time: version words, blank values, the profiling field ids in catalog order.
#include <gtest/gtest.h>

#include "dcgm/abi.hpp"

namespace gpuscope::dcgm {
namespace {

TEST(DcgmAbi, VersionWordsAreSizeAndVersion) {
  EXPECT_EQ(make_version(4128, 2), 0x02001020U);
  EXPECT_EQ(kFieldValueV2Version & 0xffffffU, sizeof(dcgmFieldValue_v2));
  EXPECT_EQ(kFieldValueV2Version >> 24, 2U);
  EXPECT_EQ(kStartEmbeddedV2ParamsVersion2, 0x02000050U);
}

TEST(DcgmAbi, BlankValues) {
  EXPECT_TRUE(is_blank(kInt64Blank));
  EXPECT_TRUE(is_blank(kInt64Blank + 2));  // not supported
  EXPECT_FALSE(is_blank(std::int64_t{81920}));
  EXPECT_TRUE(is_blank(kFp64Blank + 1.0));  // not found
  EXPECT_FALSE(is_blank(0.97));
}

TEST(DcgmAbi, ProfilingFieldsAreConsecutive) {
  EXPECT_EQ(kProfSmActive, kProfGrEngineActive + 1);
  EXPECT_EQ(kProfNvlinkRxBytes, 1012);
  EXPECT_EQ(kProfNvlinkRxBytes - kProfGrEngineActive, 11);
}

}  // namespace
}  // namespace gpuscope::dcgm
