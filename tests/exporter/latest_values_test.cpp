// The latest-values store that the table and /metrics read.
#include "exporter/latest_values.hpp"

#include <gtest/gtest.h>

#include "sample_rows.hpp"

namespace gpuscope::exporter {
namespace {

using testing::gpu;
using testing::row;

TEST(LatestValuesTest, KeepsTheLatestAndCarriesOverValuesATickLeftAbsent) {
  LatestValues latest({gpu(0)});
  SampleRow first = row(0, 1'000'000'000, 300);
  first.set(Metric::TensorActivePct, 40);
  latest.on_sample(first);
  SampleRow second = row(0, 2'000'000'000, 320);  // no GPM this tick
  latest.on_sample(second);
  const Snapshot s = latest.snapshot();
  ASSERT_EQ(s.gpus.size(), 1u);
  EXPECT_EQ(s.gpus[0].latest.get(Metric::PowerW), 320);
  EXPECT_EQ(s.gpus[0].latest.get(Metric::TensorActivePct), 40);
  EXPECT_FALSE(s.gpus[0].latest.get(Metric::DramActivePct));
  EXPECT_EQ(s.gpus[0].samples, 2);
  // Energy since start: counter difference, mJ to J (row() adds 1 mJ per ms).
  EXPECT_DOUBLE_EQ(*s.gpus[0].energy_since_start_j(), 1.0);
  EXPECT_EQ(s.version, 2);
}

TEST(LatestValuesTest, IgnoresUnknownGpusAndMarksLostOnes) {
  LatestValues latest({gpu(0), gpu(3)});
  latest.on_sample(row(5, 1, 1));
  EXPECT_EQ(latest.version(), 0);
  latest.on_event({0, 0, 3u, EventKind::GpuLost, "GPU 3 fell off the bus"});
  const Snapshot s = latest.snapshot();
  EXPECT_FALSE(s.gpus[0].lost);
  EXPECT_TRUE(s.gpus[1].lost);
}

TEST(LatestValuesTest, PowerRowsUpdatePowerAndEnergy) {
  LatestValues latest({gpu(0)});
  PowerRow p;
  p.device_index = 0;
  p.power_w = 512;
  p.energy_mj = 10'000;
  latest.on_power(p);
  p.energy_mj = 12'500;
  latest.on_power(p);
  const Snapshot s = latest.snapshot();
  EXPECT_EQ(s.gpus[0].latest.get(Metric::PowerW), 512);
  EXPECT_DOUBLE_EQ(*s.gpus[0].energy_since_start_j(), 2.5);
}

}  // namespace
}  // namespace gpuscope::exporter
