// The analysis of a log and of a job whose sources hold values no GPU can report (-300 W,
// 1e308 W, an infinite power, 900,000 %): its figures are those of the measured values, all
// finite, and the run says what was left out. Before the fix the log's mean power and energy
// came out huge or infinite and nothing was said.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "fake_source.hpp"
#include "ingest/import.hpp"
#include "ingest/monitoring/monitoring.hpp"
#include "ingest/run_target.hpp"
#include "load/loader.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::app {
namespace {

bool said(const analyze::Analysis& a, std::string_view words) {
  for (const auto& run : a.runs) {
    for (const auto& p : run.problems) {
      if (p.find(words) != std::string::npos) return true;
    }
  }
  return false;
}

const analyze::Summary& over_time(const analyze::GpuReport& g, Metric m) {
  const auto& s = g.over_time[static_cast<std::size_t>(m)];
  EXPECT_TRUE(s.has_value()) << info(m).name;
  static const analyze::Summary kNone;
  return s ? *s : kNone;
}

TEST(ImpossibleValues, ALogsAnalysisHasOnlyTheMeasuredValues) {
  testing::TempDir tmp;
  std::string text = "timestamp, index, power.draw [W], utilization.gpu [%]\n";
  for (int k = 0; k < 20; ++k) {
    const char* power = k == 4 ? "-300.00 W" : k == 9 ? "1e308 W" : "200.00 W";
    const char* util = k == 11 ? "900000 %" : k == 15 ? "-5 %" : "50 %";
    text += fmt::format("2026/11/25 10:00:{:02d}.000, 0, {}, {}\n", k, power, util);
  }
  const auto log = tmp.file("bad.csv");
  std::ofstream(log) << text;
  // As analyze reads a log: imported into a run database first (ingest::RunInputs).
  ingest::ReadOptions read;
  read.timezone = "UTC";
  const auto db = tmp.file("log.db");
  ingest::import_inputs({log}, db, false, read);
  load::AnalyzeOptions options;
  options.inputs = {db};
  options.trim = "none";
  const analyze::Analysis a = load::load_analysis(options);
  ASSERT_EQ(a.gpus.size(), 1U);
  const auto& g = a.gpus[0];
  ASSERT_TRUE(g.energy.average_power_w);
  EXPECT_DOUBLE_EQ(*g.energy.average_power_w, 200);
  EXPECT_DOUBLE_EQ(*g.energy.peak_power_w, 200);
  ASSERT_TRUE(g.energy.integrated_j);
  EXPECT_TRUE(std::isfinite(*g.energy.integrated_j));
  EXPECT_GT(*g.energy.integrated_j, 0);
  EXPECT_LE(*g.energy.integrated_j, 200.0 * 20);
  EXPECT_DOUBLE_EQ(over_time(g, Metric::PowerW).min, 200);
  EXPECT_DOUBLE_EQ(over_time(g, Metric::GpuUtilPct).max, 50);
  EXPECT_DOUBLE_EQ(over_time(g, Metric::GpuUtilPct).min, 50);
  EXPECT_TRUE(said(a, "power_w: 2 values outside 0 to 5,000 W"));
  EXPECT_TRUE(said(a, "gpu_util_pct: 2 values outside 0 to 100 %"));
}

TEST(ImpossibleValues, AJobsAnalysisHasOnlyTheMeasuredValues) {
  constexpr std::int64_t kT0 = 1'700'000'000'000, kScrape = 15'000;
  tsdb::Labels gpu = {{"gpu", "0"},
                      {"UUID", "GPU-aaa"},
                      {"device", "nvidia0"},
                      {"Hostname", "n1"},
                      {"instance", "n1:9400"},
                      {"hpc_job", "123"},
                      {"modelName", "NVIDIA H100 80GB HBM3"}};
  std::vector<tsdb::Point> power, active;
  for (int k = 0; k < 10; ++k) {
    const std::int64_t t = kT0 + k * kScrape;
    power.push_back({t, k == 2   ? -300
                        : k == 5 ? 1e308
                        : k == 7 ? std::numeric_limits<double>::infinity()
                                 : 300.0});
    active.push_back({t, k == 3 ? 9000.0 : 0.5});
  }
  ingest::testing::FakeSource src;
  gpu["__name__"] = "DCGM_FI_DEV_POWER_USAGE";
  src.add(gpu, power);
  gpu["__name__"] = "DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO";
  src.add(gpu, active);
  ingest::JobWindow job;
  job.kind = "slurm";
  job.id = "123";
  job.window = {kT0, kT0 + 9 * kScrape};
  job.nodes = {"n1"};
  testing::TempDir tmp;
  const auto db = tmp.file("job.db");
  {
    ingest::RunTarget target(db, false);
    ingest::read_job(src, job, {}, target);
    target.finish();
  }
  load::AnalyzeOptions options;
  options.inputs = {db};
  options.trim = "none";
  const analyze::Analysis a = load::load_analysis(options);
  ASSERT_EQ(a.gpus.size(), 1U);
  const auto& g = a.gpus[0];
  ASSERT_TRUE(g.energy.average_power_w);
  EXPECT_DOUBLE_EQ(*g.energy.average_power_w, 300);
  EXPECT_DOUBLE_EQ(*g.energy.peak_power_w, 300);
  ASSERT_TRUE(g.energy.integrated_j) << "power integrated: no energy counter";
  EXPECT_TRUE(std::isfinite(*g.energy.integrated_j));
  EXPECT_LE(*g.energy.integrated_j, 300.0 * 9 * 15);
  EXPECT_DOUBLE_EQ(over_time(g, Metric::GraphicsActivePct).max, 50);
  EXPECT_TRUE(said(a, "power_w: 3 values outside 0 to 5,000 W"));
  EXPECT_TRUE(said(a, "graphics_active_pct: 1 value outside"));
}

}  // namespace
}  // namespace gpuscope::app
