// A job's row from its GPUs' aggregates: the GPU rows, the job's sums and means, CO2, the score
// and each flag at its threshold (docs/fleet.md, "What each figure means").
#include "fleet/job_figures.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyze/score.hpp"

namespace gpuscope::fleet {
namespace {

constexpr double kGb = 1e9;

// A job of `gpus` GPUs that ran one hour.
SiteJob hour_job(int gpus) {
  SiteJob job;
  job.id = "42";
  job.start_ms = 1795924200000;
  job.end_ms = job.start_ms + 3'600'000;
  job.gpus = gpus;
  job.gpu_hours = gpus;
  return job;
}

// A busy GPU with every figure: 70 % active, 40 of 80 GB, 1.08 MJ from its counter.
GpuAggregate busy(const std::string& key) {
  GpuAggregate g;
  g.key = key;
  g.node = "n1";
  g.model = "NVIDIA H100 80GB HBM3";
  g.samples = 240;
  g.util_pct = 90;
  g.idle_share = 0;
  g.sm_active_pct = 70;
  g.occupancy_pct = 30;
  g.flop_pct = 40;
  g.memory_peak_bytes = 40 * kGb;
  g.memory_total_bytes = 80 * kGb;
  g.energy_rise_j = 1.08e6;
  g.power_mean_w = 300;
  g.health_faults = 0;
  return g;
}

SiteJob filled(int gpus, std::vector<GpuAggregate> aggregates, FigureOptions options = {}) {
  SiteJob job = hour_job(gpus);
  fill_figures(job, std::move(aggregates), options);
  return job;
}

TEST(JobFigures, NoAggregatesLeaveTheFiguresAbsent) {
  const SiteJob job = filled(2, {});
  EXPECT_EQ(job.source, JobSource::None);
  EXPECT_TRUE(job.gpu_rows.empty());
  EXPECT_FALSE(job.util_pct || job.energy_j || job.co2_g || job.idle_gpu_hours || job.score);
  EXPECT_TRUE(job.flags.empty());
}

TEST(JobFigures, TheJobsSumsAndMeansOverItsGpus) {
  auto a = busy("GPU-A");
  auto b = busy("GPU-B");
  b.util_pct = 50;
  b.sm_active_pct = 66;
  b.idle_share = 0.25;
  b.energy_rise_j = 0.72e6;
  b.memory_peak_bytes = 60 * kGb;
  FigureOptions o;
  o.g_per_kwh = 400;
  o.pue = 1.2;
  const SiteJob job = filled(2, {b, a}, o);
  EXPECT_EQ(job.source, JobSource::Tsdb);
  ASSERT_EQ(job.gpu_rows.size(), 2U);
  EXPECT_EQ(job.gpu_rows[0].key, "GPU-A") << "rows by node, then key";
  EXPECT_NEAR(*job.util_pct, 70, 1e-9);
  EXPECT_NEAR(*job.sm_active_pct, 68, 1e-9);
  EXPECT_NEAR(*job.idle_gpu_hours, 0.25, 1e-12) << "a quarter of one hour on one GPU";
  EXPECT_NEAR(*job.energy_j, 1.8e6, 1e-6);
  EXPECT_NEAR(*job.co2_g, 0.5 * 400 * 1.2, 1e-9) << "0.5 kWh × 400 g/kWh × PUE 1.2";
  EXPECT_NEAR(*job.peak_memory_bytes, 60 * kGb, 1);
  EXPECT_EQ(job.gpu_model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(job.gpu_rows[0].energy_source, EnergySource::Counter);
  EXPECT_TRUE(job.flags.empty());
  EXPECT_TRUE(job.notes.empty()) << job.notes[0];
}

TEST(JobFigures, WithoutACounterTheEnergyIsMeanPowerTimesTheJobsTime) {
  auto g = busy("GPU-A");
  g.energy_rise_j.reset();
  g.power_mean_w = 250;
  const SiteJob job = filled(1, {g});
  ASSERT_EQ(job.gpu_rows.size(), 1U);
  EXPECT_EQ(job.gpu_rows[0].energy_source, EnergySource::Integrated);
  EXPECT_NEAR(*job.gpu_rows[0].energy_j, 250.0 * 3600, 1e-6);
  EXPECT_NEAR(*job.energy_j, 250.0 * 3600, 1e-6);
  EXPECT_NEAR(*job.co2_g, 0.25 * 475, 1e-9) << "the world's average intensity by default";

  g.power_mean_w.reset();
  const SiteJob unknown = filled(1, {g});
  EXPECT_FALSE(unknown.energy_j);
  EXPECT_FALSE(unknown.co2_g);
  ASSERT_EQ(unknown.notes.size(), 1U);
  EXPECT_EQ(unknown.notes[0],
            "the energy of some GPUs is unknown (no counter and no power series)");
}

TEST(JobFigures, IdleAtHalfTheSamples) {
  auto g = busy("GPU-A");
  g.idle_share = 0.5;
  EXPECT_TRUE(filled(1, {g}).has(JobFlag::IdleGpus));
  g.idle_share = 0.49;
  EXPECT_FALSE(filled(1, {g}).has(JobFlag::IdleGpus));
  g.idle_share.reset();
  EXPECT_FALSE(filled(1, {g}).has(JobFlag::IdleGpus)) << "an unknown share flags nothing";
  auto idle = busy("GPU-B");
  idle.idle_share = 1;
  const SiteJob two = filled(2, {busy("GPU-A"), idle});
  EXPECT_TRUE(two.has(JobFlag::IdleGpus)) << "one idle GPU of two";
  EXPECT_NEAR(*two.idle_gpu_hours, 1, 1e-12);
}

TEST(JobFigures, AStragglerAsAnalyzeLoadBalanceFindsIt) {
  std::vector<GpuAggregate> gpus;
  for (const double sm : {80.0, 80.0, 80.0, 50.0}) {
    gpus.push_back(busy("GPU-" + std::to_string(gpus.size())));
    gpus.back().sm_active_pct = sm;
  }
  EXPECT_TRUE(filled(4, gpus).has(JobFlag::Straggler));
  gpus.back().sm_active_pct = 70;  // 12.5 % below the median: within 15 %
  EXPECT_FALSE(filled(4, gpus).has(JobFlag::Straggler));
  // Without SM active on every GPU, utilization is what is compared.
  gpus.back().sm_active_pct.reset();
  gpus.back().util_pct = 40;
  EXPECT_TRUE(filled(4, gpus).has(JobFlag::Straggler));
  EXPECT_FALSE(filled(1, {busy("GPU-A")}).has(JobFlag::Straggler)) << "one GPU has no peer";
}

TEST(JobFigures, TooLargeNeedsTheMemorySizeLittleUseAndNotAllIdle) {
  auto small = busy("GPU-A");
  small.memory_peak_bytes = 4 * kGb;  // 5 % of 80 GB
  small.sm_active_pct = 10;
  EXPECT_TRUE(filled(1, {small}).has(JobFlag::GpuTooLarge));

  auto unknown_size = small;
  unknown_size.memory_total_bytes.reset();
  EXPECT_FALSE(filled(1, {unknown_size}).has(JobFlag::GpuTooLarge));
  unknown_size.memory_used_mean_bytes = 3 * kGb;
  unknown_size.memory_free_mean_bytes = 77 * kGb;
  EXPECT_TRUE(filled(1, {unknown_size}).has(JobFlag::GpuTooLarge)) << "size = used + free";

  auto active = small;
  active.sm_active_pct = 30;
  EXPECT_FALSE(filled(1, {active}).has(JobFlag::GpuTooLarge));
  auto full = small;
  full.memory_peak_bytes = 30 * kGb;
  EXPECT_FALSE(filled(1, {full}).has(JobFlag::GpuTooLarge));
  EXPECT_FALSE(filled(2, {small, busy("GPU-B")}).has(JobFlag::GpuTooLarge))
      << "every GPU must be too large";

  auto idle = small;
  idle.idle_share = 1;
  const SiteJob all_idle = filled(1, {idle});
  EXPECT_FALSE(all_idle.has(JobFlag::GpuTooLarge)) << "an idle job is flagged idle, not small";
  EXPECT_TRUE(all_idle.has(JobFlag::IdleGpus));
}

TEST(JobFigures, HealthFaultsDuringTheJob) {
  auto g = busy("GPU-A");
  g.health_faults = 2;
  const SiteJob job = filled(1, {g});
  EXPECT_TRUE(job.has(JobFlag::HealthFault));
  EXPECT_EQ(job.gpu_rows[0].health_faults, 2);
  EXPECT_FALSE(filled(1, {busy("GPU-A")}).has(JobFlag::HealthFault));
}

TEST(JobFigures, TheScoreNeedsSmActiveFlopAndOccupancy) {
  const SiteJob job = filled(1, {busy("GPU-A")});
  const auto expected = analyze::efficiency_score(0.70, 0.40, 0.30);
  ASSERT_TRUE(expected && job.score);
  EXPECT_NEAR(*job.score, *expected, 1e-12);
  EXPECT_NEAR(*job.gpu_rows[0].score, *expected, 1e-12);
  for (auto missing :
       {&GpuAggregate::sm_active_pct, &GpuAggregate::flop_pct, &GpuAggregate::occupancy_pct}) {
    auto g = busy("GPU-A");
    (g.*missing).reset();
    EXPECT_FALSE(filled(1, {g}).score);
  }
}

TEST(JobFigures, NotesSayWhichGpusHaveNoSeries) {
  const SiteJob job = filled(4, {busy("GPU-A"), busy("GPU-B")});
  ASSERT_EQ(job.notes.size(), 1U);
  EXPECT_EQ(job.notes[0], "2 of the 4 allocated GPUs have series");
  EXPECT_EQ(job.gpu_rows.size(), 2U);

  auto mig = busy("GPU-A GI 3");
  mig.mig_profile = "1g.10gb";
  EXPECT_TRUE(filled(4, {mig}).notes.empty()) << "instances are not counted against GPUs";

  auto other = busy("GPU-B");
  other.model = "NVIDIA A100-SXM4-40GB";
  SiteJob mixed = hour_job(2);
  mixed.gpu_model = "h100";
  fill_figures(mixed, {busy("GPU-A"), other}, {});
  EXPECT_EQ(mixed.gpu_model, "h100") << "two models: sacct's word stays";
}

}  // namespace
}  // namespace gpuscope::fleet
