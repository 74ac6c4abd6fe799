// MIG instances' estimated share of their parent's energy (docs/analysis.md, "MIG instances"):
// the split by itself on hand-made bins, and through the Analyzer fed a parent GPU and its
// instances by hand, with the expected shares worked out here from the method's definition.
#include "analyze/mig_share.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "analyze/analyzer.hpp"
#include "analyze/mig_instances.hpp"

namespace gpuscope::analyze {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

MigBins parent_bins(std::vector<double> energy_j, double bin_s = 1.0) {
  MigBins b;
  b.bin_s = bin_s;
  b.covered_s.assign(energy_j.size(), bin_s);
  b.energy_j = std::move(energy_j);
  return b;
}

MigBins instance_bins(std::vector<double> activity) {
  MigBins b;
  b.bin_s = 1.0;
  b.present.assign(activity.size(), 1);
  b.activity = std::move(activity);
  return b;
}

double sum(const MigSplitResult& r) {
  double total = r.unattributed_j;
  for (double e : r.energy_j) total += e;
  return total;
}

TEST(MigSplit, IdlePartBySlicesAndTheRestBySlicesTimesActivity) {
  // Bin 0: every instance idle at 100 W (the idle power); bin 1: 300 W with A (3 of 7 slices) at
  // 80 % and B (1 of 7) at 40 %.
  const MigBins parent = parent_bins({100, 300});
  const MigBins a = instance_bins({0.0, 0.8}), b = instance_bins({0.0, 0.4});
  const MigSplitInstance in[] = {{3.0 / 7, &a}, {1.0 / 7, &b}};
  const MigSplitResult r = split_mig_energy(parent, in);
  EXPECT_TRUE(r.idle_found);
  EXPECT_DOUBLE_EQ(r.idle_power_w, 100.0);
  // Idle 100 J per bin by slices of all 7; bin 1's 200 J active in proportion to
  // 3/7·0.8 : 1/7·0.4 = 6 : 1.
  const double a_j = 2 * 100 * 3.0 / 7 + 200 * 6.0 / 7;
  const double b_j = 2 * 100 * 1.0 / 7 + 200 * 1.0 / 7;
  EXPECT_NEAR(r.energy_j[0], a_j, 1e-9);
  EXPECT_NEAR(r.energy_j[1], b_j, 1e-9);
  EXPECT_NEAR(r.unattributed_j, 2 * 100 * 3.0 / 7, 1e-9);  // the 3 slices nobody holds
  EXPECT_NEAR(sum(r), 400.0, 1e-9);
  EXPECT_DOUBLE_EQ(r.energy_j_total, 400.0);
  EXPECT_DOUBLE_EQ(r.covered_s, 2.0);
}

TEST(MigSplit, AllIdleIntervalsSplitBySlices) {
  // No interval with every instance idle: no idle power, and a bin where none is active splits
  // all of its energy by slices.
  const MigBins parent = parent_bins({210, 350});
  const MigBins a = instance_bins({0.0, 0.5}), b = instance_bins({0.0, 0.5});
  const MigSplitInstance in[] = {{2.0 / 7, &a}, {4.0 / 7, &b}};
  const MigBins busy_parent = parent_bins({210});
  const MigBins a0 = instance_bins({0.0}), b0 = instance_bins({0.0});
  const MigSplitInstance idle_in[] = {{2.0 / 7, &a0}, {4.0 / 7, &b0}};
  const MigSplitResult idle = split_mig_energy(busy_parent, idle_in);
  EXPECT_NEAR(idle.energy_j[0], 210 * 2.0 / 7, 1e-9);
  EXPECT_NEAR(idle.energy_j[1], 210 * 4.0 / 7, 1e-9);
  EXPECT_NEAR(idle.unattributed_j, 210 * 1.0 / 7, 1e-9);
  const MigSplitResult r = split_mig_energy(parent, in);
  EXPECT_NEAR(sum(r), 560.0, 1e-9);
}

TEST(MigSplit, OneInstanceWithEverySliceGetsEverything) {
  const MigBins parent = parent_bins({90, 400, 250});
  const MigBins a = instance_bins({0.0, 1.0, 0.3});
  const MigSplitInstance in[] = {{1.0, &a}};
  const MigSplitResult r = split_mig_energy(parent, in);
  EXPECT_NEAR(r.energy_j[0], 740.0, 1e-9);
  EXPECT_NEAR(r.unattributed_j, 0.0, 1e-9);
}

TEST(MigSplit, AnInstanceWithoutActivityGetsItsSlicesOnly) {
  // A (2 of 7) has no activity data; B (3 of 7) is active. Idle power: none (no bin where every
  // instance is known idle), so the whole energy is "active": A takes 2/7 of it, B the rest of
  // what is left after A, as the only instance with activity.
  const MigBins parent = parent_bins({700});
  const MigBins a = instance_bins({kNaN}), b = instance_bins({0.6});
  const MigSplitInstance in[] = {{2.0 / 7, &a}, {3.0 / 7, &b}};
  const MigSplitResult r = split_mig_energy(parent, in);
  EXPECT_FALSE(r.idle_found);
  EXPECT_NEAR(r.energy_j[0], 200.0, 1e-9);
  EXPECT_NEAR(r.energy_j[1], 500.0, 1e-9);
  EXPECT_EQ(r.slices_only_bins[0], 1U);
  EXPECT_EQ(r.slices_only_bins[1], 0U);
  EXPECT_NEAR(sum(r), 700.0, 1e-9);
}

TEST(MigSplit, AnInstanceAbsentFromABinLeavesItsSlicesUnattributed) {
  MigBins a = instance_bins({0.5, 0.5});
  a.present[0] = 0;  // created during the run
  a.activity[0] = kNaN;
  const MigBins parent = parent_bins({100, 100});
  const MigSplitInstance in[] = {{1.0, &a}};
  const MigSplitResult r = split_mig_energy(parent, in);
  EXPECT_NEAR(r.energy_j[0], 100.0, 1e-9);
  EXPECT_NEAR(r.unattributed_j, 100.0, 1e-9);
}

TEST(MigSplit, ParentBinsSumToTheCounterAndSplitReadingsAtEdges) {
  // Readings every 0.75 s, 200 W constant; bins of 1 s.
  std::vector<double> t, mj;
  for (int i = 0; i <= 8; ++i) {
    t.push_back(0.75 * i);
    mj.push_back(1e6 + 200.0 * 750 * i);
  }
  const MigBins b = mig_parent_bins(t, mj, {}, 5.0, 1.0, 7);
  double total = 0, covered = 0;
  for (std::size_t k = 0; k < b.energy_j.size(); ++k) {
    total += b.energy_j[k];
    covered += b.covered_s[k];
    if (b.covered_s[k] > 0) {
      EXPECT_NEAR(b.energy_j[k] / b.covered_s[k], 200.0, 1e-9);
    }
  }
  EXPECT_NEAR(total, 200.0 * 6, 1e-9);
  EXPECT_NEAR(covered, 6.0, 1e-12);
  EXPECT_NEAR(b.energy_j[0], 200.0, 1e-9);
}

TEST(MigSplit, SamplesBetweenTwoGpmReadingsHoldTheLastForUpToASecond) {
  // Samples every 50 ms, GPM readings on every other one (they need 100 ms between them): each
  // 50 ms bin has an activity, the held reading; after a gap of more than 1 s, none.
  const std::vector<double> t{0.025, 0.075, 0.125, 0.175, 0.225, 0.275, 1.625};
  const std::vector<double> a{0.80, kNaN, 0.60, kNaN, 0.40, kNaN, kNaN};
  const MigBins bins = mig_instance_bins(t, a, 0.05, 33);
  ASSERT_EQ(bins.activity.size(), 33u);
  EXPECT_DOUBLE_EQ(bins.activity[1], 0.80);
  EXPECT_DOUBLE_EQ(bins.activity[3], 0.60);
  EXPECT_DOUBLE_EQ(bins.activity[5], 0.40);
  EXPECT_EQ(bins.present[32], 1);
  EXPECT_TRUE(std::isnan(bins.activity[32])) << "1.35 s after the last reading: unknown";
}

TEST(MigSlices, FromSliceCountsElseTheProfile) {
  MigIdentity m;
  m.parent_slices = 7;
  EXPECT_FALSE(mig_slice_share(m));
  m.profile = "1c.3g.40gb";
  EXPECT_DOUBLE_EQ(*mig_slice_share(m), 3.0 / 7);
  m.gpu_slices = 2;
  EXPECT_DOUBLE_EQ(*mig_slice_share(m), 2.0 / 7);
  m.parent_slices.reset();
  EXPECT_FALSE(mig_slice_share(m));
}

// ---- Through the Analyzer -------------------------------------------------------------------

RunMeta run() {
  RunMeta r;
  r.run_id = 1;
  r.host = "node0";
  r.start_wall_ns = 1'000'000'000'000;
  r.sampling_interval_s = 1.0;
  r.status = "finished";
  return r;
}

void set(DeviceSeries& d, Metric m, double v) {
  d.values[static_cast<std::size_t>(m)].back() = v;
}

// The parent: 10 samples a second apart, 100 W while t < idle_s, then `busy_w`; its counter
// integrates that.
DeviceSeries parent(unsigned index, std::size_t idle_s, double busy_w, double sm_pct) {
  DeviceSeries d;
  d.key.host = "node0";
  d.key.device_index = index;
  d.key.mig_enabled = true;
  d.sampling_interval_s = 1.0;
  double mj = 1e9;
  for (std::size_t i = 0; i < 10; ++i) {
    d.t_s.push_back(static_cast<double>(i));
    for (auto& v : d.values) v.push_back(kNaN);
    const double w = i < idle_s ? 100.0 : busy_w;
    set(d, Metric::PowerW, w);
    set(d, Metric::EnergyMj, mj);
    set(d, Metric::SmActivePct, i < idle_s ? 0.0 : sm_pct);
    mj += w * 1000;
  }
  return d;
}

DeviceSeries instance(unsigned parent, unsigned gi, unsigned slices, std::size_t idle_s,
                      double sm_pct, bool with_activity = true) {
  DeviceSeries d;
  d.key.host = "node0";
  d.key.device_index = mig_device_index(parent, gi);
  MigIdentity m;
  m.parent_index = parent;
  m.gpu_instance_id = gi;
  m.profile = std::to_string(slices) + "g.20gb";
  m.gpu_slices = slices;
  m.parent_slices = 7;
  d.key.mig = m;
  d.sampling_interval_s = 1.0;
  for (std::size_t i = 0; i < 10; ++i) {
    d.t_s.push_back(static_cast<double>(i));
    for (auto& v : d.values) v.push_back(kNaN);
    if (with_activity) set(d, Metric::SmActivePct, i < idle_s ? 0.0 : sm_pct);
    set(d, Metric::MemoryUsedBytes, 1e9 * slices);
  }
  return d;
}

Analysis analyse(const std::vector<DeviceSeries>& gpus) {
  AnalysisOptions options;
  options.trim = TrimMode::None;
  Analyzer analyzer(options, {run()});
  for (const auto& d : gpus) {
    std::vector<double> activity;
    for (std::size_t i = 0; i < d.t_s.size(); ++i) {
      activity.push_back(
          sample_activity(d.of(Metric::SmActivePct)[i], d.of(Metric::GpuUtilPct)[i]));
    }
    analyzer.add_activity(d.t_s, activity);
  }
  analyzer.finish_activity();
  for (const auto& d : gpus) analyzer.add_device(d);
  return analyzer.finish();
}

TEST(MigAnalysis, InstancesGetTheirEstimatedShareAndTotalsCountTheParentOnly) {
  // Idle (100 W, every instance at 0) for 4 s, then 300 W with A (3 slices) at 80 % and B
  // (1 slice) at 40 %. The counter's intervals: 4 of 100 J, 5 of 300 J.
  const Analysis a =
      analyse({parent(0, 4, 300, 50), instance(0, 1, 3, 4, 80), instance(0, 5, 1, 4, 40)});
  ASSERT_EQ(a.gpus.size(), 3U);
  const GpuReport& p = a.gpus[0];
  const GpuReport& ia = a.gpus[1];
  const GpuReport& ib = a.gpus[2];
  EXPECT_EQ(ia.key.label(false), "GPU 0 GI 1 (3g.20gb)");
  EXPECT_EQ(ib.key.label(true), "node0 GPU 0 GI 5 (1g.20gb)");
  ASSERT_TRUE(p.energy.counter_j);
  EXPECT_DOUBLE_EQ(*p.energy.counter_j, 4 * 100 + 5 * 300);
  ASSERT_TRUE(ia.estimated && ib.estimated && p.mig_split);
  // Worked out from the method: idle 100 J of each of the 9 intervals by slices of 7; each busy
  // interval's other 200 J by 3·0.8 : 1·0.4.
  const double a_j = 9 * 100 * 3.0 / 7 + 5 * 200 * 2.4 / 2.8;
  const double b_j = 9 * 100 * 1.0 / 7 + 5 * 200 * 0.4 / 2.8;
  EXPECT_NEAR(ia.estimated->energy_j, a_j, 1e-6);
  EXPECT_NEAR(ib.estimated->energy_j, b_j, 1e-6);
  EXPECT_EQ(ia.estimated->method, "slices × activity");
  EXPECT_NEAR(*ia.estimated->power_w, a_j / 9, 1e-6);  // over the 9 s the counter covers
  EXPECT_NEAR(ia.estimated->energy_j + ib.estimated->energy_j + p.mig_split->unattributed_j,
              *p.energy.counter_j, 1e-6);
  EXPECT_DOUBLE_EQ(p.mig_split->idle_power_w, 100.0);
  // Measured fields stay empty for instances; totals are the parent's measurement only.
  EXPECT_FALSE(ia.energy.counter_j);
  EXPECT_FALSE(ia.energy.integrated_j);
  EXPECT_FALSE(ia.energy.average_power_w);
  ASSERT_TRUE(a.energy_counter_j);
  EXPECT_DOUBLE_EQ(*a.energy_counter_j, *p.energy.counter_j);
  ASSERT_TRUE(a.carbon);
  for (const auto& n : a.notes) EXPECT_EQ(n.find("energy counter was read on"), std::string::npos);
}

TEST(MigAnalysis, AnInstanceWithoutActivityIsSharedBySlicesWithANote) {
  const Analysis a = analyse({parent(0, 0, 350, 50), instance(0, 1, 7, 0, 0, false)});
  ASSERT_TRUE(a.gpus[1].estimated);
  EXPECT_EQ(a.gpus[1].estimated->method, "slices only");
  EXPECT_NEAR(a.gpus[1].estimated->energy_j, 9 * 350.0, 1e-6);  // all 7 slices
  EXPECT_FALSE(a.gpus[1].activity);
  bool noted = false;
  for (const auto& n : a.notes) noted |= n.find("GPU 0 GI 1 (7g.20gb): no activity data") == 0;
  EXPECT_TRUE(noted);
}

TEST(MigAnalysis, InstancesAreBalancedAmongThemselvesAndParentsLeftOut) {
  // Two whole GPUs (1, 2) at 60 %; GPU 0 in MIG mode at 20 % whole-GPU activity, its instances
  // at 80, 80 and 40 % of themselves.
  DeviceSeries g1 = parent(1, 0, 300, 60), g2 = parent(2, 0, 300, 60);
  g1.key.mig_enabled = false;
  g2.key.mig_enabled.reset();
  const Analysis a = analyse({parent(0, 0, 300, 20), g1, g2, instance(0, 1, 2, 0, 80),
                              instance(0, 3, 2, 0, 80), instance(0, 5, 2, 0, 40)});
  ASSERT_TRUE(a.balance);
  EXPECT_EQ(a.balance->count, 2U);  // the parent is not compared with whole GPUs
  EXPECT_TRUE(a.balance->stragglers.empty());
  ASSERT_TRUE(a.mig_balance);
  EXPECT_EQ(a.mig_balance->count, 3U);
  ASSERT_EQ(a.mig_balance->stragglers.size(), 1U);
  EXPECT_EQ(a.mig_balance->stragglers[0].index, 5U);
  bool said = false;
  for (const auto& f : a.findings) {
    said |= f.kind == "straggler" &&
            f.text.find("GPU 0 GI 5 (2g.20gb) was 50 % less active than the median MIG instance") !=
                std::string::npos;
  }
  EXPECT_TRUE(said);
}

TEST(MigAnalysis, WithoutMigTheBalanceIsAsBefore) {
  DeviceSeries g0 = parent(0, 0, 300, 80), g1 = parent(1, 0, 300, 40);
  g0.key.mig_enabled = false;
  g1.key.mig_enabled = true;  // MIG mode on, but no instance in the analysis: a whole GPU
  const Analysis a = analyse({g0, g1});
  ASSERT_TRUE(a.balance);
  EXPECT_EQ(a.balance->count, 2U);
  EXPECT_FALSE(a.mig_balance);
  EXPECT_FALSE(a.gpus[1].mig_split);
}

}  // namespace
}  // namespace gpuscope::analyze
