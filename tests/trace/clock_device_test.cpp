// Timestamps onto gpuscope's clocks, CUDA devices onto sampled GPUs, kernel names for people.
#include <gtest/gtest.h>

#include <cctype>

#include "trace/clock_map.hpp"
#include "trace/demangle.hpp"
#include "trace/device_map.hpp"

namespace gpuscope::trace {
namespace {

CalibrationRecord point(std::uint64_t cupti, std::int64_t mono, std::int64_t wall) {
  return {cupti, mono, wall, 1, 0};
}

TEST(ClockMap, MonotonicTimestampsAreTakenAsTheyAre) {
  const ClockMap clock({point(1000, 1000, 501000)}, TimestampSource::Monotonic, 123);
  EXPECT_EQ(clock.to_mono(777), 777);
  EXPECT_EQ(clock.to_wall(777), 777 + 500000);  // the calibration's wall − mono
  EXPECT_STREQ(clock.clock_name(), "monotonic");
  EXPECT_FALSE(clock.uncalibrated());
}

TEST(ClockMap, CalibratedInterpolatesBetweenPoints) {
  // CUPTI's clock (CLOCK_REALTIME) runs 1 ppm... here 1 % fast against mono, for visibility:
  // from cupti 1e9 → mono 100, to cupti 1e9 + 1e6 → mono 100 + 990000.
  const std::uint64_t c0 = 1'700'000'000'000'000'000ULL;  // a realistic realtime value
  const ClockMap clock(
      {point(c0 + 1'000'000, 100 + 990'000, 7'000'990'100), point(c0, 100, 7'000'000'100)},
      TimestampSource::CuptiDefault, 0);
  EXPECT_STREQ(clock.clock_name(), "calibrated");
  EXPECT_EQ(clock.to_mono(c0), 100);
  EXPECT_EQ(clock.to_mono(c0 + 1'000'000), 990'100);
  EXPECT_EQ(clock.to_mono(c0 + 500'000), 495'100);  // halfway: exactly, despite 1.7e18 offsets
  // Outside the points: the nearest point's offset (slope 1).
  EXPECT_EQ(clock.to_mono(c0 - 50), 50);
  EXPECT_EQ(clock.to_mono(c0 + 2'000'000), 1'990'100);
  EXPECT_EQ(clock.to_wall(c0 + 500'000), 495'100 + 7'000'000'000);
}

TEST(ClockMap, OnePointIsAnOffset) {
  const ClockMap clock({point(5000, 2000, 9000)}, TimestampSource::CuptiDefault, 0);
  EXPECT_EQ(clock.to_mono(6000), 3000);
  EXPECT_EQ(clock.to_mono(4000), 1000);
  EXPECT_EQ(clock.to_wall(6000), 10000);
}

TEST(ClockMap, NoPointFallsBackOnTheRunOffset) {
  // CUPTI's default clock is CLOCK_REALTIME: mono = cupti − (wall − mono of the run).
  const ClockMap clock({}, TimestampSource::CuptiDefault, 1000);
  EXPECT_TRUE(clock.uncalibrated());
  EXPECT_EQ(clock.to_mono(5000), 4000);
  EXPECT_EQ(clock.to_wall(5000), 5000);
}

TEST(DeviceMap, UuidAsNvmlWritesIt) {
  std::array<std::uint8_t, 16> bytes{};
  for (std::uint8_t i = 0; i < 16; ++i) bytes[i] = static_cast<std::uint8_t>(0xa0 + i);
  EXPECT_EQ(format_gpu_uuid(bytes), "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf");
}

TEST(DeviceMap, PciBusIdsOfNvmlAndCuda) {
  const auto nvml = parse_pci_bus_id("00000000:3B:00.0");
  const auto cuda = parse_pci_bus_id("0000:3b:00.0");
  ASSERT_TRUE(nvml && cuda);
  EXPECT_EQ(*nvml, *cuda);
  EXPECT_EQ(nvml->bus, 0x3Bu);
  EXPECT_EQ(format_pci_bus_id(*cuda), "00000000:3B:00.0");
  EXPECT_EQ(parse_pci_bus_id("0001:c1:1f"), (PciAddress{1, 0xc1, 0x1f}));
  EXPECT_FALSE(parse_pci_bus_id("GPU-123"));
  EXPECT_FALSE(parse_pci_bus_id("zz:00:00.0"));
  EXPECT_FALSE(parse_pci_bus_id(""));
}

std::vector<DeviceDescription> node() {
  std::vector<DeviceDescription> gpus(4);
  for (unsigned i = 0; i < 4; ++i) {
    gpus[i].index = i;
    gpus[i].uuid = "GPU-0000000" + std::to_string(i) + "-0000-0000-0000-000000000000";
    gpus[i].pci_bus_id = "00000000:1" + std::to_string(i) + ":00.0";
  }
  gpus[3].uuid.reset();
  return gpus;
}

TEST(DeviceMap, MatchesByUuidNotByOrdinal) {
  // CUDA_VISIBLE_DEVICES=2: the job's CUDA device 0 is the node's GPU 2.
  SidecarDevice d;
  d.cuda_device = 0;
  d.uuid = std::array<std::uint8_t, 16>{0, 0, 0, 2};
  EXPECT_EQ(match_device(d, node()), 2u);
  // Upper-case UUIDs in the database match too.
  auto gpus = node();
  gpus[2].uuid = "GPU-00000002-0000-0000-0000-000000000000";
  for (char& c : *gpus[2].uuid) c = static_cast<char>(std::toupper(c));
  EXPECT_EQ(match_device(d, gpus), 2u);
}

TEST(DeviceMap, FallsBackOnPciAddress) {
  SidecarDevice d;
  d.cuda_device = 0;
  d.uuid = std::array<std::uint8_t, 16>{0xff};  // no GPU has it
  d.pci = PciAddress{0, 0x13, 0};
  EXPECT_EQ(match_device(d, node()), 3u);  // GPU 3 has no UUID recorded
}

TEST(DeviceMap, NoMatchIsNotAGuess) {
  SidecarDevice d;
  d.cuda_device = 1;
  EXPECT_FALSE(match_device(d, node()).has_value());
  d.pci = PciAddress{0, 0x99, 0};
  EXPECT_FALSE(match_device(d, node()).has_value());
}

TEST(Demangle, CppNamesAndPlainNames) {
  EXPECT_EQ(demangle("_Z11relu_kernelPf"), "relu_kernel(float*)");
  EXPECT_EQ(demangle("_Z4gemmIfEviPKT_"), "void gemm<float>(int, float const*)");
  EXPECT_EQ(demangle("relu_kernel"), "relu_kernel");
  EXPECT_EQ(demangle("_Znotvalid!"), "_Znotvalid!");
}

TEST(Demangle, ShortNamesAsNsys) {
  EXPECT_EQ(short_kernel_name("void gemm<float>(int, float const*)"), "gemm");
  EXPECT_EQ(short_kernel_name("relu_kernel(float*)"), "relu_kernel");
  EXPECT_EQ(short_kernel_name("relu_kernel"), "relu_kernel");
  EXPECT_EQ(short_kernel_name(
                "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                "at::detail::Array<char*, 1>>(int, at::native::FillFunctor<float>, "
                "at::detail::Array<char*, 1>)"),
            "vectorized_elementwise_kernel");
  EXPECT_EQ(short_kernel_name("void ns::k<(int)1>(std::pair<int, int>)"), "k");
}

}  // namespace
}  // namespace gpuscope::trace
