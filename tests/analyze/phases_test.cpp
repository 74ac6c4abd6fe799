// analyze/phases: nesting, the interval meter (counter interpolation, resets, power integration,
// held samples) and the per-phase sums over GPUs, on hand-computed series.
#include "analyze/phases.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "analyze/analyzer.hpp"

namespace gpuscope::analyze {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// t = 0, 1, ..., 10 s; a 100 W counter; SM active 50 % before 5 s, 100 % from it.
DeviceSeries series(double watts = 100) {
  DeviceSeries d;
  d.sampling_interval_s = 1;
  for (int i = 0; i <= 10; ++i) {
    d.t_s.push_back(i);
    d.values[static_cast<std::size_t>(Metric::EnergyMj)].push_back(watts * 1000 * i);
    d.values[static_cast<std::size_t>(Metric::SmActivePct)].push_back(i < 5 ? 50 : 100);
    d.values[static_cast<std::size_t>(Metric::PowerW)].push_back(watts);
  }
  return d;
}

PhaseSpan span(std::uint32_t name, double start, double end, std::uint64_t track = 0) {
  PhaseSpan s;
  s.name = name;
  s.start_s = start;
  s.end_s = end;
  s.track = track;
  s.source = PhaseSource::Mark;
  return s;
}

TEST(IntervalMeter, CounterInterpolatedAtTheEdges) {
  const IntervalMeter m(series());
  EXPECT_NEAR(*m.energy_j(2.5, 4.5), 200, 1e-9);
  EXPECT_NEAR(*m.energy_j(-5, 0.5), 50, 1e-9);  // clamped to the first reading
  EXPECT_NEAR(*m.energy_j(9.5, 20), 50, 1e-9);  // and the last
  EXPECT_EQ(*m.energy_j(3, 3), 0);
}

TEST(IntervalMeter, ACounterResetCountsNothingInItsInterval) {
  DeviceSeries d = series();
  auto& e = d.values[static_cast<std::size_t>(Metric::EnergyMj)];
  for (std::size_t i = 5; i < e.size(); ++i) e[i] = 100000.0 * static_cast<double>(i - 5);
  const IntervalMeter m(d);
  // [3, 4]: 100 J; [4, 5] holds the reset: 0; [5, 7]: 200 J.
  EXPECT_NEAR(*m.energy_j(3, 7), 300, 1e-9);
}

TEST(IntervalMeter, WithoutACounterPowerIsIntegrated) {
  DeviceSeries d = series(200);
  for (auto& v : d.values[static_cast<std::size_t>(Metric::EnergyMj)]) v = kNaN;
  const IntervalMeter m(d);
  EXPECT_TRUE(m.has_energy());
  EXPECT_NEAR(*m.energy_j(1, 2.5), 300, 1e-9);
}

TEST(IntervalMeter, NoEnergyAtAll) {
  DeviceSeries d = series();
  for (auto& v : d.values[static_cast<std::size_t>(Metric::EnergyMj)]) v = kNaN;
  for (auto& v : d.values[static_cast<std::size_t>(Metric::PowerW)]) v = kNaN;
  const IntervalMeter m(d);
  EXPECT_FALSE(m.has_energy());
  EXPECT_FALSE(m.energy_j(1, 2));
}

TEST(IntervalMeter, SamplesHoldUntilTheNext) {
  const IntervalMeter m(series());
  const auto [integral, covered] = m.metric(0, 4, 6);  // 50 over [4, 5), 100 over [5, 6)
  EXPECT_NEAR(covered, 2, 1e-9);
  EXPECT_NEAR(integral / covered, 75, 1e-9);
  const auto [i2, c2] = m.metric(0, 4.25, 4.75);
  EXPECT_NEAR(i2 / c2, 50, 1e-9);
  // Unmeasured samples are not covered.
  DeviceSeries d = series();
  d.values[static_cast<std::size_t>(Metric::SmActivePct)][4] = kNaN;
  const IntervalMeter gaps(d);
  const auto [i3, c3] = gaps.metric(0, 4, 6);
  EXPECT_NEAR(c3, 1, 1e-9);
  EXPECT_NEAR(i3 / c3, 100, 1e-9);
}

TEST(PhaseLayout, ContainmentWithinATrack) {
  const std::vector<PhaseSpan> spans{span(0, 0, 10), span(1, 1, 3), span(2, 2, 2.5), span(1, 5, 6),
                                     span(3, 1, 2, /*track=*/1)};
  const PhaseLayout l = layout_phases(spans);
  EXPECT_EQ(l.parent[0], -1);
  EXPECT_EQ(l.parent[1], 0);
  EXPECT_EQ(l.parent[2], 1);
  EXPECT_EQ(l.parent[3], 0);
  EXPECT_EQ(l.parent[4], -1);  // another track: never a child of span 0
  EXPECT_EQ(l.depth[2], 2);
  // Span 0's children cover [1, 3] and [5, 6].
  ASSERT_EQ(l.cover_begin[1] - l.cover_begin[0], 2U);
  EXPECT_EQ(l.cover[l.cover_begin[0]], std::make_pair(1.0, 3.0));
  EXPECT_EQ(l.cover[l.cover_begin[0] + 1], std::make_pair(5.0, 6.0));
}

TEST(PhaseLayout, OverlappingChildrenAreMergedAndPartialOverlapsAreSiblings) {
  const std::vector<PhaseSpan> spans{span(0, 0, 10), span(1, 1, 4), span(1, 3, 5),
                                     span(2, 4.5, 12)};
  const PhaseLayout l = layout_phases(spans);
  EXPECT_EQ(l.parent[1], 0);
  EXPECT_EQ(l.parent[2], 0);   // overlaps its sibling, inside the parent
  EXPECT_EQ(l.parent[3], -1);  // sticks out of span 0: not its child
  ASSERT_EQ(l.cover_begin[1] - l.cover_begin[0], 1U);
  EXPECT_EQ(l.cover[l.cover_begin[0]], std::make_pair(1.0, 5.0));
}

TEST(PhaseAnalysis, SumsOverGpusWithExclusiveFigures) {
  // epoch [0, 10] holding step [1, 3] and step [5, 6]; GPU 0 at 100 W, GPU 1 at 300 W.
  std::vector<PhaseSpan> spans{span(0, 0, 10), span(1, 1, 3), span(1, 5, 6)};
  spans[1].instance = "1";
  spans[2].instance = "2";
  PhaseAnalysis phases({"epoch", "step"}, spans);
  DeviceSeries g0 = series(100), g1 = series(300);
  g1.key.device_index = 1;
  PhaseGpuPart p0 = phases.measure(g0, 0, 0);
  PhaseGpuPart p1 = phases.measure(g1, 0, 1);
  p0.gpu = 0;
  p1.gpu = 1;
  phases.add(p0);
  phases.add(p1);
  const PhaseReport r = phases.finish(/*job_energy_j=*/4000.0, /*work_units=*/100.0, 2, 10);
  ASSERT_EQ(r.names.size(), 2U);
  const PhaseName& epoch = r.names[0];  // the most energy first
  EXPECT_EQ(epoch.name, "epoch");
  EXPECT_NEAR(*epoch.total.energy_j, 4000, 1e-6);
  EXPECT_NEAR(*epoch.total.exclusive_energy_j, 4000 - 3 * 400, 1e-6);
  EXPECT_NEAR(epoch.total.exclusive_time_s, 7, 1e-9);
  EXPECT_NEAR(*epoch.total.energy_share, 1, 1e-12);
  EXPECT_NEAR(*epoch.total.mean_power_w, 400, 1e-9);
  EXPECT_NEAR(*epoch.total.metrics[0], 75, 1e-9);  // SMs 50 % for 5 s, 100 % for 5 s
  EXPECT_NEAR(*epoch.energy_per_unit_j, 40, 1e-9);
  ASSERT_EQ(epoch.gpu_energy_j.size(), 2U);
  EXPECT_NEAR(*epoch.gpu_energy_j[0], 1000, 1e-6);
  EXPECT_NEAR(*epoch.gpu_energy_j[1], 3000, 1e-6);
  const PhaseName& step = r.names[1];
  EXPECT_EQ(step.count, 2U);
  EXPECT_NEAR(*step.total.energy_j, 1200, 1e-6);
  EXPECT_NEAR(*step.mean_energy_j, 600, 1e-6);
  EXPECT_NEAR(step.mean_time_s, 1.5, 1e-9);
  EXPECT_NEAR(step.median_time_s, 1.5, 1e-9);
  EXPECT_NEAR(step.time_cv, 0.5 / 1.5, 1e-9);
  // Instances in start order, with their depth.
  ASSERT_EQ(r.instances.size(), 3U);
  EXPECT_EQ(r.instances[1].instance, "1");
  EXPECT_EQ(r.instances[1].depth, 1);
  EXPECT_NEAR(*r.instances[2].figures.energy_j, 400, 1e-6);
  EXPECT_NEAR(r.covered_time_s, 10, 1e-9);
}

TEST(PhaseAnalysis, APhaseOfOneGpuIsMeasuredOnThatGpuOnly) {
  std::vector<PhaseSpan> spans{span(0, 1, 2)};
  spans[0].device_index = 1;
  PhaseAnalysis phases({"kernel work"}, spans);
  EXPECT_TRUE(phases.measure(series(), 0, 0).spans.empty());
  EXPECT_EQ(phases.measure(series(), 0, 1).spans.size(), 1U);
  EXPECT_TRUE(phases.measure(series(), 1, 1).spans.empty());  // another run
}

TEST(PhaseAnalysis, SlowStretchesByInstance) {
  std::vector<PhaseSpan> spans;
  std::vector<double> times{1, 1, 1, 1.5, 1.6, 1, 1, 1, 1.4, 1};
  double t = 0;
  for (std::size_t i = 0; i < times.size(); ++i) {
    spans.push_back(span(0, t, t + times[i]));
    spans.back().instance = std::to_string(100 + i);
    t += times[i];
  }
  PhaseAnalysis phases({"step"}, spans);
  const PhaseReport r = phases.finish(std::nullopt, std::nullopt, 0, 10);
  ASSERT_EQ(r.names.size(), 1U);
  const auto& slow = r.names[0].slow_stretches;
  ASSERT_EQ(slow.size(), 2U);
  EXPECT_EQ(slow[0], std::make_pair(std::string("103"), std::string("104")));
  EXPECT_EQ(slow[1], std::make_pair(std::string("108"), std::string("108")));
  EXPECT_FALSE(r.names[0].total.energy_j);  // no GPU measured it
}

TEST(PhaseAnalysis, MoreInstancesThanListedAreBinned) {
  // epoch [0, 10] holding step [1, 3] and step [5, 6]; only 1 instance listed: bins.
  PhaseAnalysis phases({"epoch", "step"}, {span(0, 0, 10), span(1, 1, 3), span(1, 5, 6)});
  const PhaseReport r = phases.finish(std::nullopt, std::nullopt, 0, 1);
  EXPECT_EQ(r.instances.size(), 1U);
  EXPECT_EQ(r.instance_count, 3U);
  ASSERT_TRUE(r.bins);
  const PhaseBins& b = *r.bins;
  EXPECT_EQ(b.bins, kPhaseBins);
  EXPECT_NEAR(b.bin_s, 10.0 / kPhaseBins, 1e-12);
  ASSERT_EQ(b.busy_s.size(), 2U);  // depths 0 and 1
  double row0 = 0, row1 = 0;
  std::uint32_t started1 = 0;
  for (std::size_t k = 0; k < b.bins; ++k) {
    row0 += b.busy_s[0][k];
    row1 += b.busy_s[1][k];
    started1 += b.started[1][k];
  }
  EXPECT_NEAR(row0, 10, 1e-9);
  EXPECT_NEAR(row1, 3, 1e-9);
  EXPECT_EQ(started1, 2U);
  EXPECT_EQ(b.longest_name[1][200], 1);  // the step starting at 1 s (bin 200)
  EXPECT_NEAR(b.longest_s[1][200], 2, 1e-12);
  EXPECT_EQ(r.span_names, (std::vector<std::string>{"epoch", "step"}));
  // Listing them all: no bins.
  EXPECT_FALSE(phases.finish(std::nullopt, std::nullopt, 0, 10).bins);
}

TEST(PhaseAnalysis, PointsAreCountedNotMeasured) {
  std::vector<PhaseSpan> spans{span(0, 1, 1)};
  spans[0].point = true;
  PhaseAnalysis phases({"checkpoint saved"}, spans);
  EXPECT_TRUE(phases.measure(series(), 0, 0).spans.empty());
  const PhaseReport r = phases.finish(1000.0, std::nullopt, 1, 10);
  EXPECT_EQ(r.point_count, 1U);
  EXPECT_EQ(r.instance_count, 0U);
  ASSERT_EQ(r.names.size(), 1U);
  EXPECT_EQ(r.names[0].points, 1U);
}

}  // namespace
}  // namespace gpuscope::analyze
