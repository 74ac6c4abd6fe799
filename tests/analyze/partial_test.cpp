// The distributed analysis' exactness (docs/analysis.md "A job of thousands of GPUs"): GPUs
// split into tasks at random, each task's pass 1 shared as an ActivityPart and its pass 2 sent
// through the partial codec's bytes, give the same Analysis as one analyzer fed every GPU: the
// same JSON, every double to the bit.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "analyze/analyzer.hpp"
#include "analyze/partial_codec.hpp"
#include "core/error.hpp"
#include "report/analysis_view.hpp"

namespace gpuscope::analyze {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<double>& column(DeviceSeries& d, Metric m) {
  return d.values[static_cast<std::size_t>(m)];
}

// A GPU of run `run`: an idle start of random length, then work; integer utilisation, noisy
// floating-point power and SM activity, memory in whole MiB, some NaN, a late start.
DeviceSeries random_gpu(std::mt19937& random, std::size_t run) {
  DeviceSeries d;
  d.key.run_id = static_cast<std::int64_t>(run);
  d.key.host = "nid" + std::to_string(run / 4);
  d.key.device_index = static_cast<unsigned>(run % 4);
  d.sampling_interval_s = 0.1;
  std::uniform_real_distribution<double> unit(0, 1);
  const double start = 0.1 * static_cast<double>(random() % 30);
  const std::size_t n = 300 + random() % 400;
  const std::size_t idle = random() % 120;
  const double scale = 0.5 + 0.5 * unit(random);
  for (std::size_t i = 0; i < n; ++i) {
    const bool busy = i >= idle;
    d.t_s.push_back(start + 0.1 * static_cast<double>(i));
    const double util = busy ? std::round(100 * scale - 10 * unit(random)) : 0.0;
    column(d, Metric::GpuUtilPct).push_back(random() % 50 == 0 ? kNaN : util);
    column(d, Metric::SmActivePct).push_back(busy ? 90 * scale * unit(random) : unit(random));
    column(d, Metric::PowerW).push_back((busy ? 400 * scale : 70) + 5 * unit(random));
    column(d, Metric::MemoryUsedBytes).push_back(static_cast<double>(random() % 800) * 1048576);
    column(d, Metric::TemperatureC).push_back(std::round(40 + 30 * scale));
    column(d, Metric::EnergyMj).push_back(1e3 * static_cast<double>(i) * (busy ? 40 : 7));
  }
  return d;
}

double activity_of(const DeviceSeries& d, std::size_t i) {
  return sample_activity(d.values[static_cast<std::size_t>(Metric::SmActivePct)][i],
                         d.values[static_cast<std::size_t>(Metric::GpuUtilPct)][i]);
}

void add_activity(Analyzer& a, const DeviceSeries& d) {
  std::vector<double> activity;
  for (std::size_t i = 0; i < d.t_s.size(); ++i) activity.push_back(activity_of(d, i));
  a.add_activity(d.t_s, activity);
}

std::vector<RunMeta> runs_of(std::size_t n) {
  std::vector<RunMeta> runs(n);
  for (std::size_t i = 0; i < n; ++i) {
    runs[i].run_id = 1;
    runs[i].host = "nid" + std::to_string(i / 4);
    runs[i].rank = static_cast<int>(i);
    runs[i].start_wall_ns = 1'700'000'000'000'000'000 + static_cast<std::int64_t>(i) * 1000;
  }
  return runs;
}

std::string one_analyzer(const std::vector<DeviceSeries>& gpus, const AnalysisOptions& options) {
  Analyzer a(options, runs_of(gpus.size()));
  for (const auto& d : gpus) add_activity(a, d);
  a.finish_activity();
  for (const auto& d : gpus) a.add_device(d);
  return report::analysis_json(a.finish()).dump();
}

// The same GPUs in tasks [cuts[t], cuts[t + 1]), everything between tasks passed as bytes.
std::string in_tasks(const std::vector<DeviceSeries>& gpus, const AnalysisOptions& options,
                     const std::vector<std::size_t>& cuts) {
  const std::size_t tasks = cuts.size() - 1;
  std::vector<std::unique_ptr<Analyzer>> analyzers;
  std::vector<std::string> activity(tasks);
  for (std::size_t t = 0; t < tasks; ++t) {
    analyzers.push_back(std::make_unique<Analyzer>(options, runs_of(gpus.size())));
    for (std::size_t g = cuts[t]; g < cuts[t + 1]; ++g) add_activity(*analyzers[t], gpus[g]);
    PartWriter out;
    write_activity(out, analyzers[t]->activity_part());
    activity[t] = out.take();
  }
  std::vector<std::string> devices, counts;
  for (std::size_t t = 0; t < tasks; ++t) {
    for (std::size_t other = 0; other < tasks; ++other) {
      if (other == t) continue;
      PartReader in(activity[other], "activity");
      analyzers[t]->add_activity_part(read_activity(in));
    }
    analyzers[t]->finish_activity();
    OverallCounts task_counts;
    for (std::size_t g = cuts[t]; g < cuts[t + 1]; ++g) {
      PreparedDevice d = analyzers[t]->prepare_device(gpus[g]);
      task_counts.take(d);
      PartWriter out;
      write_device(out, d);
      devices.push_back(out.take());
    }
    PartWriter out;
    write_counts(out, task_counts);
    counts.push_back(out.take());
  }
  Analyzer& combined = *analyzers.front();
  for (std::size_t g = 0; g < gpus.size(); ++g) {
    PartReader in(devices[g], "device");
    PreparedDevice d = read_device(in);
    EXPECT_TRUE(in.done());
    d.report.key = gpus[g].key;
    combined.add_prepared(std::move(d));
  }
  for (const auto& bytes : counts) {
    PartReader in(bytes, "counts");
    combined.add_overall_counts(read_counts(in));
  }
  return report::analysis_json(combined.finish()).dump();
}

TEST(DistributedAnalysis, RandomSplitsGiveTheSameAnalysisToTheBit) {
  for (unsigned seed = 1; seed <= 12; ++seed) {
    std::mt19937 random(seed);
    std::vector<DeviceSeries> gpus;
    const std::size_t n = 3 + random() % 14;
    for (std::size_t g = 0; g < n; ++g) gpus.push_back(random_gpu(random, g));
    AnalysisOptions options;
    options.trim = seed % 2 ? TrimMode::All : TrimMode::Leading;
    options.gpu_grid_metrics = {Metric::PowerW, Metric::GpuUtilPct};
    const std::string expected = one_analyzer(gpus, options);
    // Cuts anywhere, tasks with no GPU included.
    std::vector<std::size_t> cuts{0};
    const std::size_t tasks = 1 + random() % 6;
    for (std::size_t t = 1; t < tasks; ++t) cuts.push_back(random() % (n + 1));
    cuts.push_back(n);
    std::sort(cuts.begin(), cuts.end());
    EXPECT_EQ(in_tasks(gpus, options, cuts), expected)
        << "seed " << seed << ", " << tasks << " tasks";
  }
}

TEST(DistributedAnalysis, ActivityPartsOfDifferentWidthsAddUpExactly) {
  // One task's samples reach far enough to coarsen its bins; the other's do not: the merged bins
  // are those of one analyzer fed both.
  AnalysisOptions options;
  Analyzer both(options, runs_of(2)), near(options, runs_of(2)), far(options, runs_of(2));
  const std::vector<double> t_near{0, 0.1, 0.2, 5.3}, a_near{0.1, 0.7, 0.3, 0.9};
  const std::vector<double> t_far{0.05, 300'000.0}, a_far{0.2, 0.4};
  both.add_activity(t_near, a_near);
  both.add_activity(t_far, a_far);
  near.add_activity(t_near, a_near);
  far.add_activity(t_far, a_far);
  near.add_activity_part(far.activity_part());
  const ActivityPart expected = both.activity_part(), merged = near.activity_part();
  EXPECT_GT(expected.width, 0.1);
  EXPECT_EQ(merged.width, expected.width);
  EXPECT_EQ(merged.count, expected.count);
  EXPECT_TRUE(merged.sum == expected.sum);
  EXPECT_EQ(merged.max_t_s, expected.max_t_s);
}

TEST(DistributedAnalysis, ADamagedPartIsAnErrorNotADifference) {
  std::mt19937 random(3);
  AnalysisOptions options;
  Analyzer a(options, runs_of(1));
  const DeviceSeries d = random_gpu(random, 0);
  add_activity(a, d);
  a.finish_activity();
  PreparedDevice prepared = a.prepare_device(d);
  OverallCounts counts;
  counts.take(prepared);
  PartWriter out;
  write_device(out, prepared);
  const std::string bytes = out.take();
  // Cut off anywhere: an Error naming the file, never a crash or a huge allocation.
  for (std::size_t cut : {std::size_t{0}, std::size_t{7}, bytes.size() / 2, bytes.size() - 1}) {
    PartReader in(std::string_view(bytes).substr(0, cut), "part-1-of-2.bin");
    try {
      (void)read_device(in);
      ADD_FAILURE() << "a part cut at " << cut << " of " << bytes.size() << " was read";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("part-1-of-2.bin is damaged or cut off"),
                std::string::npos)
          << e.what();
    }
  }
  // A count that claims more elements than the bytes hold.
  PartWriter huge;
  huge.u64(std::uint64_t{1} << 60);
  PartReader in(huge.bytes(), "activity");
  EXPECT_THROW((void)read_activity(in), Error);
}

}  // namespace
}  // namespace gpuscope::analyze
