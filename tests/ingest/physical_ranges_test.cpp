// Values no GPU can report (-300 W, 1e308 W, 900,000 %, -5 %, an infinite power) in a log and
// in a job's series: left out of the run database (NULL), counted, and said on the run with the
// metric, how many, the range and the first one with where it was. Before the fix they were
// written as measurements and the analysis gave a mean power of -nan and an infinite energy.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "core/metric_ranges.hpp"
#include "fake_source.hpp"
#include "ingest/monitoring/job_timeline.hpp"
#include "ingest/monitoring/monitoring.hpp"
#include "ingest/value_screen.hpp"
#include "log_import.hpp"
#include "store/run_reader.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::ingest {
namespace {

bool has(const std::vector<std::string>& texts, std::initializer_list<std::string_view> words) {
  for (const auto& t : texts) {
    bool all = true;
    for (auto w : words) all = all && t.find(w) != std::string::npos;
    if (all) return true;
  }
  return false;
}

std::string joined(const std::vector<std::string>& texts) {
  std::string out;
  for (const auto& t : texts) out += t + "\n";
  return out;
}

TEST(PhysicalRanges, TheTableCoversEveryMetricWithItsUnit) {
  for (const auto& m : kMetrics) {
    const PhysicalRange& r = physical_range(m.id);
    EXPECT_EQ(r.id, m.id);
    if (m.unit != "bitmask") {
      EXPECT_NE(r.text.find(m.unit), std::string_view::npos) << m.name << ": " << r.text;
    }
  }
  EXPECT_TRUE(physically_possible(Metric::PowerW, 0));
  EXPECT_TRUE(physically_possible(Metric::PowerW, 700));
  EXPECT_FALSE(physically_possible(Metric::PowerW, -300));
  EXPECT_FALSE(physically_possible(Metric::PowerW, 1e308));
  EXPECT_FALSE(physically_possible(Metric::PowerW, std::numeric_limits<double>::infinity()));
  EXPECT_FALSE(physically_possible(Metric::PowerW, std::nan("")));
  EXPECT_TRUE(physically_possible(Metric::GpuUtilPct, 100.4)) << "a rounding over 100";
  EXPECT_FALSE(physically_possible(Metric::GpuUtilPct, 900'000));
  EXPECT_FALSE(physically_possible(Metric::SmActivePct, -5));
  EXPECT_TRUE(physically_possible(Metric::MemClockMhz, 14'001)) << "GDDR7 as nvidia-smi says it";
  EXPECT_TRUE(physically_possible(Metric::TemperatureC, -20));
  EXPECT_FALSE(physically_possible(Metric::TemperatureC, 1000));
  EXPECT_FALSE(physically_possible(Metric::EnergyMj, -1));
}

TEST(ValueScreen, LeavesOutCountsAndSaysTheFirstWithItsLine) {
  ValueScreen screen;
  SampleRow row;
  row.device_index = 2;
  row.set(Metric::PowerW, -300);
  row.set(Metric::GpuUtilPct, 50);
  EXPECT_EQ(screen.screen(row, 12), 1U);
  EXPECT_FALSE(row.get(Metric::PowerW));
  EXPECT_EQ(row.get(Metric::GpuUtilPct), 50);
  row.set(Metric::PowerW, 1e308);
  screen.screen(row, 13);
  row.set(Metric::PowerW, 250);
  EXPECT_EQ(screen.screen(row, 14), 0U);
  EXPECT_EQ(screen.total(), 2);
  const auto said = screen.said("log.csv: ");
  ASSERT_EQ(said.size(), 1U);
  EXPECT_NE(said[0].find("log.csv: power_w: 2 values outside 0 to 5,000 W"), std::string::npos)
      << said[0];
  EXPECT_NE(said[0].find("e.g. -300 at line 12 (GPU 2)"), std::string::npos) << said[0];
}

// An nvidia-smi CSV log with -300 W, 1e308 W, 900,000 % and -5 %: the good values kept, the
// impossible ones NULL, each metric said once with its count and first line.
TEST(PhysicalRanges, ImpossibleValuesInALogAreLeftOutAndSaid) {
  gpuscope::testing::TempDir tmp;
  std::string text = "timestamp, index, power.draw [W], utilization.gpu [%]\n";
  for (int k = 0; k < 20; ++k) {
    std::string power = "200.00 W", util = "50 %";
    if (k == 4) power = "-300.00 W";  // line 6
    if (k == 9) power = "1e308 W";
    if (k == 11) util = "900000 %";  // line 13
    if (k == 15) util = "-5 %";
    text += fmt::format("2026/11/25 10:00:{:02d}.000, 0, {}, {}\n", k, power, util);
  }
  const auto log = test::import_logs({test::write_text(tmp.file("bad.csv"), text)}, [] {
    ReadOptions o;
    o.timezone = "UTC";
    return o;
  }());
  ASSERT_EQ(log.count(0), 20U) << "every line is a row; only its impossible values are out";
  double sum = 0;
  std::size_t powers = 0, utils = 0;
  for (const auto& row : log.samples.at(0)) {
    if (auto p = row.get(Metric::PowerW)) sum += *p, ++powers;
    if (auto u = row.get(Metric::GpuUtilPct)) {
      EXPECT_EQ(*u, 50);
      ++utils;
    }
  }
  EXPECT_EQ(powers, 18U);
  EXPECT_EQ(utils, 18U);
  EXPECT_DOUBLE_EQ(sum / static_cast<double>(powers), 200) << "the mean of what was measured";
  EXPECT_TRUE(log.note_has(
      {"bad.csv: power_w: 2 values outside 0 to 5,000 W", "e.g. -300", "at line 6 (GPU 0)"}))
      << joined(log.notes);
  EXPECT_TRUE(log.note_has(
      {"bad.csv: gpu_util_pct: 2 values outside 0 to 100 %", "e.g. 900000 at line 13"}))
      << joined(log.notes);
  EXPECT_TRUE(log.problem_has("power_w: 2 values outside")) << "said on the run too";
}

// The same from a monitoring database: dcgm-exporter's series with a negative power, a power of
// 1e308 W, an infinite one, an activity ratio of 9,000 (900,000 %) and a utilization of -5 %.
TEST(PhysicalRanges, ImpossibleValuesInAJobsSeriesAreLeftOutAndSaid) {
  constexpr std::int64_t kT0 = 1'700'000'000'000, kScrape = 15'000;
  const tsdb::Labels gpu = {{"gpu", "0"},
                            {"UUID", "GPU-aaa"},
                            {"device", "nvidia0"},
                            {"modelName", "NVIDIA H100 80GB HBM3"},
                            {"Hostname", "n1"},
                            {"pci_bus_id", "00000000:19:00.0"},
                            {"instance", "n1:9400"},
                            {"hpc_job", "123"}};
  auto with = [&](const std::string& name) {
    tsdb::Labels l = gpu;
    l["__name__"] = name;
    return l;
  };
  std::vector<tsdb::Point> power, active, util, energy;
  for (int k = 0; k < 10; ++k) {
    const std::int64_t t = kT0 + k * kScrape;
    double p = 300;
    if (k == 2) p = -300;
    if (k == 5) p = 1e308;
    if (k == 7) p = std::numeric_limits<double>::infinity();
    power.push_back({t, p});
    active.push_back({t, k == 3 ? 9000.0 : 0.5});
    util.push_back({t, k == 6 ? -5.0 : 87.0});
    energy.push_back({t, 5e6 + k * 4.5e3});
  }
  testing::FakeSource src;
  src.add(with("DCGM_FI_DEV_POWER_USAGE"), power);
  src.add(with("DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO"), active);
  src.add(with("DCGM_FI_DEV_GPU_UTIL"), util);
  src.add(with("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"), energy);
  JobWindow job;
  job.kind = "slurm";
  job.id = "123";
  job.window = {kT0, kT0 + 9 * kScrape};
  job.nodes = {"n1"};

  gpuscope::testing::TempDir tmp;
  const auto out = tmp.file("job.db");
  MonitoringResult result;
  {
    RunTarget target(out, false);
    result = read_job(src, job, {}, target);
    target.finish();
  }
  const auto reader = store::RunReader::open(out);
  const auto runs = reader.runs();
  ASSERT_EQ(runs.size(), 1U);
  std::size_t powers = 0, actives = 0, utils = 0, energies = 0;
  reader.for_each_sample({}, [&](const store::RunSample& s) {
    if (auto p = s.row.get(Metric::PowerW)) {
      EXPECT_EQ(*p, 300);
      ++powers;
    }
    if (auto a = s.row.get(Metric::GraphicsActivePct)) {
      EXPECT_EQ(*a, 50);
      ++actives;
    }
    if (auto u = s.row.get(Metric::GpuUtilPct)) {
      EXPECT_EQ(*u, 87);
      ++utils;
    }
    energies += s.row.get(Metric::EnergyMj) ? 1U : 0U;
  });
  EXPECT_EQ(powers, 7U);
  EXPECT_EQ(actives, 9U);
  EXPECT_EQ(utils, 9U);
  EXPECT_EQ(energies, 10U);
  EXPECT_TRUE(has(result.notes, {"n1: power_w: 3 values outside 0 to 5,000 W", "e.g. -300 at "}))
      << joined(result.notes);
  EXPECT_TRUE(
      has(result.notes, {"n1: graphics_active_pct: 1 value outside 0 to 100 %", "e.g. 900000"}))
      << joined(result.notes);
  EXPECT_TRUE(has(result.notes, {"n1: gpu_util_pct: 1 value outside", "e.g. -5 at "}))
      << joined(result.notes);
  EXPECT_TRUE(has(runs[0].end.problems, {"power_w: 3 values outside"}));
}

// A reading stamped past what nanoseconds hold is refused, never wrapped into the job.
TEST(PhysicalRanges, ARowTimePastWhatNanosecondsHoldIsRefused) {
  const std::int64_t late = 1'700'000'000'000 + 18'446'744'073'710;  // + 2^64 ns
  EXPECT_THROW(group_rows({{late, Metric::PowerW, 300}}, 15'000), Error);
  const auto rows = group_rows({{1'700'000'000'000, Metric::PowerW, 300}}, 15'000);
  ASSERT_EQ(rows.size(), 1U);
  EXPECT_EQ(rows[0].wall_ns, 1'700'000'000'000'000'000);
}

}  // namespace
}  // namespace gpuscope::ingest
