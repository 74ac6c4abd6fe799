// The analysis engine fed by hand: alignment over space, per-GPU statistics inside the trimmed
// window, load balance and the diagnosis, energy totals and carbon. No database.
#include "analyze/analyzer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::analyze {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

RunMeta run(std::int64_t start_ns = 1'000'000'000'000) {
  RunMeta r;
  r.run_id = 1;
  r.host = "node0";
  r.start_wall_ns = start_ns;
  r.sampling_interval_s = 1.0;
  r.status = "finished";
  return r;
}

// A GPU sampled every second for `n` seconds: SM active `idle_pct` for the first `idle_s`
// seconds, then `busy_pct`; power 100 W idle, 400 W busy; the energy counter integrates it.
DeviceSeries gpu(unsigned index, std::size_t n, std::size_t idle_s, double busy_pct,
                 double idle_pct = 0) {
  DeviceSeries d;
  d.key.host = "node0";
  d.key.device_index = index;
  d.sampling_interval_s = 1.0;
  double energy_mj = 5e9;
  for (std::size_t i = 0; i < n; ++i) {
    const bool busy = i >= idle_s;
    d.t_s.push_back(static_cast<double>(i));
    for (auto& v : d.values) v.push_back(kNaN);
    auto set = [&](Metric m, double v) { d.values[static_cast<std::size_t>(m)].back() = v; };
    const double power = busy ? 400.0 : 100.0;
    set(Metric::SmActivePct, busy ? busy_pct : idle_pct);
    set(Metric::GpuUtilPct, busy ? 100.0 : 0.0);
    set(Metric::PowerW, power);
    set(Metric::EnergyMj, energy_mj);
    set(Metric::PowerLimitW, 700.0);
    set(Metric::ClockEventReasons, busy ? 0.0 : 1.0);  // idle bit only: not a throttle
    energy_mj += power * 1000.0;                       // 1 s at `power` W
  }
  return d;
}

Analysis analyse(std::vector<DeviceSeries> gpus, AnalysisOptions options = {}) {
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

TEST(Analyzer, TrimsTheIdleStartAndSummarisesTheRest) {
  const Analysis a = analyse({gpu(0, 100, 20, 80), gpu(1, 100, 20, 80)});
  EXPECT_NEAR(a.window.leading_trimmed_s, 20.0, 1.0);
  const auto& sm = a.gpus[0].over_time[static_cast<std::size_t>(Metric::SmActivePct)];
  ASSERT_TRUE(sm);
  EXPECT_DOUBLE_EQ(sm->mean, 80.0);  // the idle start is out of the statistics
  EXPECT_DOUBLE_EQ(sm->min, 80.0);
  ASSERT_TRUE(a.over_both[static_cast<std::size_t>(Metric::SmActivePct)]);
  EXPECT_NEAR(a.over_both[static_cast<std::size_t>(Metric::SmActivePct)]->median, 80.0, 0.1);
  bool said = false;
  for (const auto& f : a.findings) said |= f.kind == "idle_start";
  EXPECT_TRUE(said);
}

TEST(Analyzer, NoTrimmingKeepsEverything) {
  AnalysisOptions options;
  options.trim = TrimMode::None;
  const Analysis a = analyse({gpu(0, 100, 20, 80)}, options);
  EXPECT_EQ(a.window.leading_trimmed_s, 0.0);
  EXPECT_DOUBLE_EQ(a.gpus[0].over_time[static_cast<std::size_t>(Metric::SmActivePct)]->mean, 64.0);
}

TEST(Analyzer, OverSpaceAlignsGpusOnTimeAndNamesTheExtremes) {
  const Analysis a = analyse({gpu(0, 50, 0, 90), gpu(1, 50, 0, 30)});
  const auto& series = a.over_space[static_cast<std::size_t>(Metric::SmActivePct)];
  ASSERT_FALSE(series.empty());
  for (const auto& p : series) {
    EXPECT_EQ(p.gpus, 2U);
    EXPECT_DOUBLE_EQ(p.mean, 60.0);
    EXPECT_DOUBLE_EQ(p.min, 30.0);
    EXPECT_DOUBLE_EQ(p.max, 90.0);
    EXPECT_EQ(p.min_gpu, 1U);
    EXPECT_EQ(p.max_gpu, 0U);
  }
}

TEST(Analyzer, StragglerIsNamedWithItsLoss) {
  const Analysis a =
      analyse({gpu(0, 100, 0, 80), gpu(1, 100, 0, 80), gpu(2, 100, 0, 80), gpu(3, 100, 0, 40)});
  ASSERT_TRUE(a.balance);
  ASSERT_EQ(a.balance->stragglers.size(), 1U);
  EXPECT_EQ(a.balance->stragglers[0].index, 3U);
  EXPECT_NEAR(a.balance->stragglers[0].below_median, 0.5, 1e-9);
  std::string text;
  for (const auto& f : a.findings) {
    if (f.kind == "straggler") text = f.text;
  }
  EXPECT_NE(text.find("GPU 3"), std::string::npos) << text;
  EXPECT_NE(text.find("50 % less active"), std::string::npos) << text;
}

TEST(Analyzer, EnergyFromTheCounterAndIntegratedPower) {
  // 10 s idle (100 W) + 90 s busy (400 W) = 1000 + 36000 J (the counter's last step is not seen).
  const Analysis a = analyse({gpu(0, 100, 10, 80)});
  ASSERT_TRUE(a.energy_counter_j);
  EXPECT_NEAR(*a.energy_counter_j, 10 * 100.0 + 89 * 400.0, 1e-6);
  ASSERT_TRUE(a.energy_integrated_j);
  // Trapezoids: 9 idle intervals, one 100→400 step, 89 busy intervals.
  EXPECT_NEAR(*a.energy_integrated_j, 9 * 100.0 + 250.0 + 89 * 400.0, 1e-6);
  EXPECT_DOUBLE_EQ(*a.gpus[0].energy.peak_power_w, 400.0);
  EXPECT_DOUBLE_EQ(*a.gpus[0].energy.power_limit_w, 700.0);
}

TEST(Analyzer, CarbonFromTheRegionOrTheUser) {
  AnalysisOptions fr;
  fr.region = "FR";
  const Analysis a = analyse({gpu(0, 100, 0, 80)}, fr);
  ASSERT_TRUE(a.carbon);
  EXPECT_DOUBLE_EQ(a.carbon->g_per_kwh, 56.0);
  EXPECT_NEAR(a.carbon->grams, *a.energy_counter_j / 3.6e6 * 56.0, 1e-9);
  AnalysisOptions own;
  own.carbon_g_per_kwh = 200;
  own.pue = 1.5;
  own.work_units = 1000;
  const Analysis b = analyse({gpu(0, 100, 0, 80)}, own);
  EXPECT_NEAR(b.carbon->grams, *b.energy_counter_j / 3.6e6 * 200 * 1.5, 1e-9);
  ASSERT_TRUE(b.energy_per_unit_j);
  EXPECT_NEAR(*b.energy_per_unit_j, *b.energy_counter_j / 1000, 1e-9);
  EXPECT_NEAR(*b.carbon->grams_per_unit, b.carbon->grams / 1000, 1e-12);
}

// The grid series joined with the counter, by hand: run start t0 = 1000 s (wall), two GPUs
// at 100 W idle for 10 s then 400 W, counter read every second for 100 s (0..99).
TEST(Analyzer, CarbonFromAGridSeriesPeriodByPeriod) {
  constexpr std::int64_t kS = 1'000'000'000;
  const std::int64_t t0 = 1'000'000'000'000;
  AnalysisOptions o;
  o.region = "FR";  // 56 g/kWh: the flat figure for what the periods miss
  o.pue = 1.2;
  IntensitySeries series;
  series.source = "file grid.csv";
  // [5 s, 20 s) at 100 g/kWh, a gap [20, 30), [30, 200) at 300 g/kWh (actual).
  series.periods = {{t0 + 5 * kS, t0 + 20 * kS, 100, IntensityKind::Given},
                    {t0 + 30 * kS, t0 + 200 * kS, 300, IntensityKind::Actual}};
  o.grid_series = series;
  const Analysis a = analyse({gpu(0, 100, 10, 80), gpu(1, 100, 10, 80)}, o);
  ASSERT_TRUE(a.carbon);
  const Carbon& c = *a.carbon;
  // Per GPU: [0, 5) 500 J (before the series), [5, 20) 5×100 + 10×400 = 4500 J, [20, 30)
  // 4000 J (the gap), [30, 99] 69×400 = 27600 J (readings end at 99 s: never extrapolated).
  ASSERT_EQ(c.intervals.size(), 2U);
  EXPECT_NEAR(c.intervals[0].energy_j, 2 * 4500.0, 1e-6);
  EXPECT_NEAR(c.intervals[1].energy_j, 2 * 27600.0, 1e-6);
  EXPECT_EQ(c.intervals[1].kind, IntensityKind::Actual);
  EXPECT_NEAR(c.intervals[0].grams, 2 * 4500.0 / 3.6e6 * 100 * 1.2, 1e-9);
  const double outside_j = 2 * (500.0 + 4000.0);
  const double expected = (2 * 4500.0 * 100 + 2 * 27600.0 * 300 + outside_j * 56) / 3.6e6 * 1.2;
  EXPECT_NEAR(c.grams, expected, 1e-9);
  EXPECT_NEAR(*c.coverage, (2 * 4500.0 + 2 * 27600.0) / *a.energy_counter_j, 1e-12);
  EXPECT_NEAR(*c.yearly_grams, *a.energy_counter_j / 3.6e6 * 56 * 1.2, 1e-9);
  EXPECT_EQ(c.source, "file grid.csv");
  EXPECT_NEAR(c.g_per_kwh, c.grams / 1.2 / (*a.energy_counter_j / 3.6e6), 1e-9);
  // Each GPU's own carbon: half the total here (two equal GPUs), periods and flat part alike.
  ASSERT_TRUE(a.gpus[0].energy.carbon_g);
  EXPECT_NEAR(*a.gpus[0].energy.carbon_g + *a.gpus[1].energy.carbon_g, c.grams, 1e-9);
  EXPECT_NEAR(*a.gpus[0].energy.carbon_g, c.grams / 2, 1e-9);
  // What fell outside is said, with the figure it was counted at.
  bool noted = false;
  for (const auto& n : a.notes)
    noted = noted || n.find("fell outside the periods") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Analyzer, MissingMetricsStayMissing) {
  DeviceSeries d = gpu(0, 30, 0, 80);
  d.values[static_cast<std::size_t>(Metric::SmActivePct)].assign(30, kNaN);  // no GPM
  const Analysis a = analyse({d});
  EXPECT_FALSE(a.over_both[static_cast<std::size_t>(Metric::SmActivePct)]);
  EXPECT_FALSE(a.gpus[0].over_time[static_cast<std::size_t>(Metric::SmActivePct)]);
  EXPECT_TRUE(a.over_space[static_cast<std::size_t>(Metric::SmActivePct)].empty());
  EXPECT_EQ(a.gpus[0].activity_metric, "gpu_util_pct");
  EXPECT_FALSE(a.score);
}

TEST(Analyzer, TensorIdleWhileFp32BusySuggestsMixedPrecision) {
  DeviceSeries d = gpu(0, 30, 0, 90);
  d.values[static_cast<std::size_t>(Metric::TensorActivePct)].assign(30, 1.0);
  d.values[static_cast<std::size_t>(Metric::Fp32ActivePct)].assign(30, 60.0);
  const Analysis a = analyse({d});
  bool said = false;
  for (const auto& f : a.findings) said |= f.kind == "no_tensor_cores";
  EXPECT_TRUE(said);
}

// What a low utilization is called follows the metric catalog's meaning on the GPUs' vendor: an
// AMD GPU's column holds its graphics activity; GPUs of two vendors get the generic name.
std::string low_utilization_text(const std::vector<Vendor>& vendors) {
  std::vector<DeviceSeries> gpus;
  for (unsigned i = 0; i < vendors.size(); ++i) {
    DeviceSeries d = gpu(i, 30, 0, 30);
    d.key.vendor = vendors[i];
    d.values[static_cast<std::size_t>(Metric::SmActivePct)].assign(30, kNaN);
    d.values[static_cast<std::size_t>(Metric::GpuUtilPct)].assign(30, 30.0);
    gpus.push_back(d);
  }
  const Analysis a = analyse(gpus);
  for (const auto& f : a.findings) {
    if (f.kind == "low_utilization") return f.text;
  }
  return "";
}

TEST(Analyzer, LowUtilizationIsNamedByTheVendorsMeaning) {
  EXPECT_EQ(
      low_utilization_text({Vendor::Amd, Vendor::Amd}).rfind("Graphics activity averaged 30 %", 0),
      0U);
  EXPECT_EQ(low_utilization_text({Vendor::Nvidia}).rfind("GPU utilization averaged 30 %", 0), 0U);
  EXPECT_EQ(
      low_utilization_text({Vendor::Amd, Vendor::Nvidia}).rfind("GPU utilization averaged", 0), 0U);
  ASSERT_NE(metric_meaning(Metric::GpuUtilPct, Vendor::Amd), nullptr);
  EXPECT_EQ(metric_meaning(Metric::GpuUtilPct, Vendor::Amd)->label, "graphics activity (AMD)");
  EXPECT_EQ(metric_meaning(Metric::GpuUtilPct, Vendor::Nvidia)->name, "GPU utilization");
  EXPECT_EQ(metric_meaning(Metric::PowerW, Vendor::Amd), nullptr);
}

bool has_finding(const Analysis& a, std::string_view kind) {
  for (const auto& f : a.findings) {
    if (f.kind == kind) return true;
  }
  return false;
}

TEST(Analyzer, LowOccupancyIsAFindingOnlyWithoutBusyTensorCores) {
  // What an H200 read for a bf16 GEMM: SM active 97 %, occupancy 14 %, tensor cores 94 %.
  DeviceSeries gemm = gpu(0, 30, 0, 97);
  gemm.values[static_cast<std::size_t>(Metric::SmOccupancyPct)].assign(30, 14.0);
  gemm.values[static_cast<std::size_t>(Metric::TensorActivePct)].assign(30, 94.0);
  EXPECT_FALSE(has_finding(analyse({gemm}), "low_occupancy"));
  // The same occupancy with the tensor cores idle: kernels that launch few warps.
  DeviceSeries scalar = gemm;
  scalar.values[static_cast<std::size_t>(Metric::TensorActivePct)].assign(30, 2.0);
  EXPECT_TRUE(has_finding(analyse({scalar}), "low_occupancy"));
  DeviceSeries unknown = gemm;  // no tensor metric at all (an older GPU without profiling)
  unknown.values[static_cast<std::size_t>(Metric::TensorActivePct)].assign(30, kNaN);
  EXPECT_TRUE(has_finding(analyse({unknown}), "low_occupancy"));
}

TEST(Analyzer, LowOccupancyIsJudgedWhileTheSmsAreActive) {
  // What the H200 run of docs/validation.md looked like with its idle stretches kept: a GEMM
  // (SM 97 %, occupancy 14 %, tensor 94 %) in 13 of 25 samples, idle between: overall means
  // SM 50 %, occupancy 7 %, tensor 49 %. Per unit of SM activity it is the same GEMM.
  DeviceSeries d = gpu(0, 25, 0, 97);
  auto& sm = d.values[static_cast<std::size_t>(Metric::SmActivePct)];
  auto& occupancy = d.values[static_cast<std::size_t>(Metric::SmOccupancyPct)];
  auto& tensor = d.values[static_cast<std::size_t>(Metric::TensorActivePct)];
  occupancy.assign(25, 14.0);
  tensor.assign(25, 94.0);
  for (std::size_t i = 1; i < 25; i += 2) sm[i] = occupancy[i] = tensor[i] = 0;
  const Analysis gemm = analyse({d});
  ASSERT_TRUE(gemm.over_both[static_cast<std::size_t>(Metric::TensorActivePct)]);
  EXPECT_LT(gemm.over_both[static_cast<std::size_t>(Metric::TensorActivePct)]->mean, 50);
  EXPECT_FALSE(has_finding(gemm, "low_occupancy"));
  for (std::size_t i = 0; i < 25; i += 2) tensor[i] = 2;  // the same without tensor cores
  EXPECT_TRUE(has_finding(analyse({d}), "low_occupancy"));
}

TEST(Analyzer, PowerCapFinding) {
  DeviceSeries d = gpu(0, 40, 0, 90);
  d.values[static_cast<std::size_t>(Metric::ClockEventReasons)].assign(40, 4.0);  // SW power cap
  const Analysis a = analyse({d});
  bool said = false;
  for (const auto& f : a.findings) said |= f.kind == "power_capped";
  EXPECT_TRUE(said);
}

TEST(Analyzer, OneSampleGivesAnswersWithoutCrashing) {
  const Analysis a = analyse({gpu(0, 1, 0, 50)});
  ASSERT_EQ(a.gpus.size(), 1U);
  EXPECT_FALSE(a.energy_counter_j);  // one reading is no difference
  EXPECT_FALSE(a.balance);
}

TEST(Analyzer, GpuLostIsAFinding) {
  Analyzer analyzer({}, {run()});
  DeviceSeries d = gpu(0, 10, 0, 80);
  analyzer.add_activity(d.t_s, d.of(Metric::SmActivePct));
  analyzer.finish_activity();
  analyzer.add_device(d);
  analyzer.note_gpu_lost(d.key, 8.0, false);
  const Analysis a = analyzer.finish();
  ASSERT_FALSE(a.findings.empty());
  EXPECT_EQ(a.findings[0].kind, "gpu_lost");
  EXPECT_NE(a.findings[0].text.find("8.0 s"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::analyze
