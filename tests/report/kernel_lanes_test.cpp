// The report's kernel lanes: slices up to the cap, bins past it, with the kernel time of each
// bin split where kernels cross bin edges.
#include "report/kernel_lanes.hpp"

#include <gtest/gtest.h>

namespace gpuscope::report {
namespace {

TEST(KernelLanes, SlicesSortedPerGpu) {
  KernelLanes lanes(3, 10.0, 4);
  const std::size_t gemm = lanes.name("void gemm<float>(int)");
  const std::size_t relu = lanes.name("relu(float*)");
  EXPECT_EQ(lanes.name("void gemm<float>(int)"), gemm);
  lanes.add(2, 5'000, 100, gemm);
  lanes.add(2, 1'000, 300, relu);
  lanes.add(0, 2'000, 50, gemm);
  lanes.add(9, 0, 1, gemm);  // no such GPU: ignored
  lanes.add_unsampled(4);
  EXPECT_FALSE(lanes.binned());
  const auto j = lanes.to_json();
  EXPECT_EQ(j["mode"], "slices");
  EXPECT_EQ(j["total"], 3);
  EXPECT_EQ(j["shown"], 3);
  EXPECT_EQ(j["unsampled"], 4);
  ASSERT_EQ(j["lanes"].size(), 2u);  // GPUs without kernels have no lane
  EXPECT_EQ(j["lanes"][0]["gpu"], 0);
  const auto& lane = j["lanes"][1];
  EXPECT_EQ(lane["gpu"], 2);
  EXPECT_EQ(lane["start_ns"], nlohmann::json({1'000, 5'000}));
  EXPECT_EQ(lane["duration_ns"], nlohmann::json({300, 100}));
  EXPECT_EQ(lane["name"], nlohmann::json({relu, gemm}));
  EXPECT_EQ(j["names"][gemm], "void gemm<float>(int)");
}

TEST(KernelLanes, BinsPastTheCap) {
  // 2000 bins over 2 s: 1 ms bins.
  KernelLanes lanes(kMaxKernelSlices + 1, 2.0, 1);
  ASSERT_TRUE(lanes.binned());
  const std::size_t a = lanes.name("a");
  const std::size_t b = lanes.name("b");
  lanes.add(0, 500'000, 1'000'000, a);  // 0.5–1.5 ms: half in bin 0, half in bin 1
  lanes.add(0, 100'000, 200'000, b);    // bin 0
  lanes.add(0, 5'000'000'000, 10, b);   // past the end: the last bin
  const auto j = lanes.to_json();
  EXPECT_EQ(j["mode"], "bins");
  EXPECT_EQ(j["bins"], kKernelBins);
  EXPECT_DOUBLE_EQ(j["bin_s"].get<double>(), 0.001);
  EXPECT_NE(j["note"].get<std::string>().find("perfetto"), std::string::npos);
  const auto& lane = j["lanes"][0];
  EXPECT_EQ(lane["busy_ns"][0], 700'000);
  EXPECT_EQ(lane["busy_ns"][1], 500'000);
  EXPECT_EQ(lane["count"][0], 2);
  EXPECT_EQ(lane["count"][1], 0);
  EXPECT_EQ(lane["longest_ns"][0], 1'000'000);
  EXPECT_EQ(lane["longest_name"][0], a);
  EXPECT_EQ(lane["count"][kKernelBins - 1], 1);
  EXPECT_EQ(lane.contains("start_ns"), false);
}

}  // namespace
}  // namespace gpuscope::report
