// GPM metrics are interval averages of the bucket levels between two samples.
#include "driver_harness.hpp"
#include "sim/gpu_model.hpp"

namespace gpuscope::sim {
namespace {

using testing::DriverHarness;

class Gpm : public ::testing::Test {
 protected:
  void SetUp() override {
    harness_.init(testing::shipped_scenario("h100x4-straggler"));
    ASSERT_EQ(GpmSampleAlloc(&first_), nvml::kSuccess);
    ASSERT_EQ(GpmSampleAlloc(&second_), nvml::kSuccess);
  }
  void TearDown() override {
    EXPECT_EQ(GpmSampleFree(first_), nvml::kSuccess);
    EXPECT_EQ(GpmSampleFree(second_), nvml::kSuccess);
  }

  // The time-weighted mean of metric over [from_s, to_s), from an independent model of GPU gpu.
  double hand_mean(std::size_t gpu, Activity metric, double from_s, double to_s) const {
    const Scenario scenario = testing::must_load(testing::shipped_scenario("h100x4-straggler"));
    GpuModel model(scenario.gpus[gpu], scenario.seed, gpu);
    const auto from_ns = static_cast<std::int64_t>(from_s * 1e9 + 0.5);
    const auto to_ns = static_cast<std::int64_t>(to_s * 1e9 + 0.5);
    double weighted = 0;
    for (std::int64_t bucket = from_ns / kBucketNs; bucket * kBucketNs < to_ns; ++bucket) {
      model.advance_to(bucket * kBucketNs);
      const std::int64_t start = std::max(bucket * kBucketNs, from_ns);
      const std::int64_t end = std::min((bucket + 1) * kBucketNs, to_ns);
      weighted += model.bucket().levels[index_of(metric)] * static_cast<double>(end - start);
    }
    return weighted / static_cast<double>(to_ns - from_ns);
  }

  nvmlGpmMetricsGet_t metrics_between(std::size_t gpu, double from_s, double to_s) {
    harness_.clock().set_scenario_s(from_s);
    EXPECT_EQ(GpmSampleGet(harness_.device(static_cast<unsigned>(gpu)), first_), nvml::kSuccess);
    harness_.clock().set_scenario_s(to_s);
    EXPECT_EQ(GpmSampleGet(harness_.device(static_cast<unsigned>(gpu)), second_), nvml::kSuccess);
    nvmlGpmMetricsGet_t request{};
    request.version = nvml::kGpmMetricsGetVersion;
    request.sample1 = first_;
    request.sample2 = second_;
    const unsigned int ids[] = {nvml::kGpmSmUtil, nvml::kGpmAnyTensorUtil,
                                nvml::kGpmNvlinkTotalTxPerSec, nvml::kGpmPcieRxPerSec,
                                nvml::kGpmIntegerUtil};
    for (unsigned int id : ids) request.metrics[request.numMetrics++].metricId = id;
    EXPECT_EQ(GpmMetricsGet(&request), nvml::kSuccess);
    return request;
  }

  DriverHarness harness_;
  nvmlGpmSample_t first_ = nullptr;
  nvmlGpmSample_t second_ = nullptr;
};

TEST_F(Gpm, AverageOverWholeBucketsIsTheMeanOfBucketLevels) {
  const nvmlGpmMetricsGet_t result = metrics_between(0, 10.0, 12.0);
  EXPECT_EQ(result.metrics[0].nvmlReturn, nvml::kSuccess);
  EXPECT_NEAR(result.metrics[0].value, hand_mean(0, Activity::SmActive, 10.0, 12.0), 1e-9);
  EXPECT_NEAR(result.metrics[1].value, hand_mean(0, Activity::Tensor, 10.0, 12.0), 1e-9);
  EXPECT_NEAR(result.metrics[2].value, hand_mean(0, Activity::NvlinkTx, 10.0, 12.0), 1e-6);
  EXPECT_STREQ(result.metrics[2].metricInfo.unit, "MiB/s");
  EXPECT_STREQ(result.metrics[0].metricInfo.unit, "%");
  EXPECT_EQ(result.metrics[4].nvmlReturn, nvml::kErrorNotSupported);  // not modelled
}

TEST_F(Gpm, AverageIsExactForIntervalsThatSplitBuckets) {
  const nvmlGpmMetricsGet_t result = metrics_between(3, 20.037, 21.561);
  EXPECT_NEAR(result.metrics[0].value, hand_mean(3, Activity::SmActive, 20.037, 21.561), 1e-9);
  EXPECT_NEAR(result.metrics[3].value, hand_mean(3, Activity::PcieRx, 20.037, 21.561), 1e-6);
}

TEST_F(Gpm, ShortIntervalsAreStillComputed) {
  const nvmlGpmMetricsGet_t result = metrics_between(1, 30.0, 30.02);
  EXPECT_EQ(result.metrics[0].nvmlReturn, nvml::kSuccess);
  EXPECT_NEAR(result.metrics[0].value, hand_mean(1, Activity::SmActive, 30.0, 30.02), 1e-9);
}

TEST_F(Gpm, RejectsMismatchedOrMisorderedSamples) {
  harness_.clock().set_scenario_s(5);
  ASSERT_EQ(GpmSampleGet(harness_.device(0), first_), nvml::kSuccess);
  harness_.clock().set_scenario_s(6);
  ASSERT_EQ(GpmSampleGet(harness_.device(1), second_), nvml::kSuccess);
  nvmlGpmMetricsGet_t request{};
  request.version = nvml::kGpmMetricsGetVersion;
  request.numMetrics = 1;
  request.metrics[0].metricId = nvml::kGpmSmUtil;
  request.sample1 = first_;
  request.sample2 = second_;
  EXPECT_EQ(GpmMetricsGet(&request), nvml::kErrorInvalidArgument);  // two devices
  request.sample2 = first_;
  EXPECT_EQ(GpmMetricsGet(&request), nvml::kErrorInvalidArgument);  // empty interval
  request.version = 2;
  EXPECT_EQ(GpmMetricsGet(&request), nvml::kErrorArgumentVersionMismatch);
  nvmlGpmSample_st unknown;
  EXPECT_EQ(GpmSampleGet(harness_.device(0), &unknown), nvml::kErrorInvalidArgument);
}

TEST(GpmSupport, UnsupportedDevicesRefuseSamples) {
  DriverHarness harness;
  harness.init(testing::shipped_scenario("a100-nogpm"));
  nvmlGpmSample_t sample = nullptr;
  ASSERT_EQ(GpmSampleAlloc(&sample), nvml::kSuccess);
  EXPECT_EQ(GpmSampleGet(harness.device(0), sample), nvml::kErrorNotSupported);
  EXPECT_EQ(GpmSampleFree(sample), nvml::kSuccess);
  EXPECT_EQ(GpmSampleFree(sample), nvml::kErrorInvalidArgument);  // already freed
}

}  // namespace
}  // namespace gpuscope::sim
