// A small Analysis built through the real Analyzer from hand-made series, for the report tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "analyze/analyzer.hpp"
#include "report/html_report.hpp"

namespace gpuscope::report::testing {

// `gpus` GPUs sampled every second for `seconds`; the last one is half as active (a
// straggler); GPU 1 has no GPM (no SM active), so sm_active_pct is unsupported on it. With
// `gpus_per_host`, the GPUs are those of ranks 0, 1, … on hosts node0, node1, … (one run each);
// else all are node0's, in one run.
inline analyze::Analysis synthetic_analysis(unsigned gpus = 3, std::size_t seconds = 60,
                                            unsigned gpus_per_host = 0) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  const unsigned per_host = gpus_per_host ? gpus_per_host : std::max(gpus, 1U);
  std::vector<analyze::RunMeta> runs;
  for (unsigned r = 0; r < (gpus + per_host - 1) / per_host; ++r) {
    analyze::RunMeta run;
    run.run_id = r + 1;
    run.host = "node" + std::to_string(r);
    if (gpus_per_host) run.rank = static_cast<int>(r);
    run.start_wall_ns = 1'700'000'000'000'000'000;
    run.end_wall_ns = run.start_wall_ns + static_cast<std::int64_t>(seconds) * 1'000'000'000;
    run.sampling_interval_s = 1.0;
    run.status = "finished";
    run.exit_code = 0;
    run.command_line = "python train.py";
    runs.push_back(run);
  }
  analyze::AnalysisOptions options;
  options.gpu_grid_metrics = html_report_grid_metrics();
  analyze::Analyzer analyzer(options, runs);
  std::vector<analyze::DeviceSeries> series(gpus);
  for (unsigned g = 0; g < gpus; ++g) {
    auto& d = series[g];
    d.key.host = "node" + std::to_string(g / per_host);
    if (gpus_per_host) {
      d.key.run_id = g / per_host + 1;
      d.key.rank = static_cast<int>(g / per_host);
    }
    d.key.device_index = g % per_host;
    d.key.name = "NVIDIA H100 80GB HBM3";
    d.sampling_interval_s = 1.0;
    double energy_mj = 1e9;
    const double busy = g + 1 == gpus ? 40.0 : 80.0;
    for (std::size_t i = 0; i < seconds; ++i) {
      d.t_s.push_back(static_cast<double>(i));
      for (auto& v : d.values) v.push_back(kNaN);
      auto set = [&](Metric m, double v) { d.values[static_cast<std::size_t>(m)].back() = v; };
      const double wave = 5 * std::sin(static_cast<double>(i) / 5);
      const double power = 300 + 2 * busy + wave;
      if (g != 1) set(Metric::SmActivePct, busy + wave);
      set(Metric::GpuUtilPct, busy + 10);
      set(Metric::PowerW, power);
      set(Metric::EnergyMj, energy_mj);
      set(Metric::PowerLimitW, 700);
      set(Metric::TemperatureC, 50 + busy / 4);
      energy_mj += power * 1000;
    }
  }
  for (const auto& d : series) {
    std::vector<double> activity;
    for (std::size_t i = 0; i < d.t_s.size(); ++i) {
      activity.push_back(
          analyze::sample_activity(d.of(Metric::SmActivePct)[i], d.of(Metric::GpuUtilPct)[i]));
    }
    analyzer.add_activity(d.t_s, activity);
  }
  analyzer.finish_activity();
  for (const auto& d : series) analyzer.add_device(d);
  analyze::Analysis a = analyzer.finish();
  a.inputs = {"run.db"};
  a.marks.push_back({1.0, "job_start", "python train.py", ""});
  a.marks.push_back({20.5, "stdout", "epoch 1 </script><script>alert(1)</script>", ""});
  return a;
}

// A node with GPU 0 in MIG mode (power and energy measured, 50 % whole-GPU SM activity) holding
// three instances (GI 1 3g.40gb at 80 %, GI 5 2g.20gb at 80 %, GI 9 1g.10gb at 30 % of
// themselves; no power of their own), and GPU 1 a whole GPU.
inline analyze::Analysis synthetic_mig_analysis(std::size_t seconds = 30) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  analyze::RunMeta run;
  run.run_id = 1;
  run.host = "node0";
  run.start_wall_ns = 1'700'000'000'000'000'000;
  run.end_wall_ns = run.start_wall_ns + static_cast<std::int64_t>(seconds) * 1'000'000'000;
  run.sampling_interval_s = 1.0;
  run.status = "finished";
  analyze::AnalysisOptions options;
  options.gpu_grid_metrics = html_report_grid_metrics();
  analyze::Analyzer analyzer(options, {run});
  std::vector<analyze::DeviceSeries> series;
  auto add = [&](unsigned index, std::optional<MigIdentity> mig, double sm, bool power) {
    analyze::DeviceSeries d;
    d.key.host = "node0";
    d.key.device_index = index;
    d.key.name = mig ? "NVIDIA H100 80GB HBM3 MIG " + *mig->profile : "NVIDIA H100 80GB HBM3";
    d.key.mig = mig;
    if (!mig) d.key.mig_enabled = index == 0;
    d.sampling_interval_s = 1.0;
    double energy_mj = 1e9;
    for (std::size_t i = 0; i < seconds; ++i) {
      d.t_s.push_back(static_cast<double>(i));
      for (auto& v : d.values) v.push_back(kNaN);
      auto set = [&](Metric m, double v) { d.values[static_cast<std::size_t>(m)].back() = v; };
      set(Metric::SmActivePct, sm);
      set(Metric::MemoryUsedBytes, mig ? 4e9 * *mig->gpu_slices : 20e9);
      if (!power) continue;
      const double w = 150 + 3 * sm;
      set(Metric::PowerW, w);
      set(Metric::EnergyMj, energy_mj);
      set(Metric::PowerLimitW, 700);
      set(Metric::TemperatureC, 55);
      energy_mj += w * 1000;
    }
    series.push_back(std::move(d));
  };
  auto instance = [](unsigned gi, unsigned slices, const char* profile) {
    MigIdentity m;
    m.parent_index = 0;
    m.gpu_instance_id = gi;
    m.compute_instance_id = 0;
    m.profile = profile;
    m.gpu_slices = slices;
    m.parent_slices = 7;
    return m;
  };
  add(0, std::nullopt, 50, true);
  add(1, std::nullopt, 70, true);
  add(mig_device_index(0, 1), instance(1, 3, "3g.40gb"), 80, false);
  add(mig_device_index(0, 5), instance(5, 2, "2g.20gb"), 80, false);
  add(mig_device_index(0, 9), instance(9, 1, "1g.10gb"), 30, false);
  for (const auto& d : series) {
    std::vector<double> activity;
    for (std::size_t i = 0; i < d.t_s.size(); ++i) {
      activity.push_back(
          analyze::sample_activity(d.of(Metric::SmActivePct)[i], d.of(Metric::GpuUtilPct)[i]));
    }
    analyzer.add_activity(d.t_s, activity);
  }
  analyzer.finish_activity();
  for (const auto& d : series) analyzer.add_device(d);
  analyze::Analysis a = analyzer.finish();
  a.inputs = {"mig.db"};
  return a;
}

}  // namespace gpuscope::report::testing
