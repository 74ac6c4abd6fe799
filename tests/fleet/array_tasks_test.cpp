// A thousand array tasks, as sacct prints them (each task its own JobIDRaw, `7000_<i>` shown, a
// name with quotes, spaces and non-ASCII) and as gpuscope serve labels them: a thousand rows,
// each with its own task's figures, in batches of the default size on both servers' ways.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "aggregate_test_data.hpp"
#include "fake_promql_source.hpp"
#include "fleet/gpu_aggregates.hpp"
#include "fleet/sacct_jobs.hpp"
#include "support/fixed_time_zone.hpp"
#include "util/local_time.hpp"

namespace gpuscope::fleet {
namespace {

using testing::every10s;
using testing::FakePromqlSource;
using testing::kS;
using testing::kSecond;

constexpr int kTasks = 1000;

std::string raw_id(int task) {
  return std::to_string(7001 + task);
}

// Task i ran on node n<i % 50> from i s to i + 100 s after kS, one GPU.
std::string sacct_output() {
  std::string out;
  for (int i = 0; i < kTasks; ++i) {
    const std::int64_t start = kS + i * kSecond, end = start + 100 * kSecond;
    out += raw_id(i) + "|7000_" + std::to_string(i) + "|alice|physics|gpu|COMPLETED|" +
           util::local_text(start, "%Y-%m-%dT%H:%M:%S") + "|" +
           util::local_text(end, "%Y-%m-%dT%H:%M:%S") + "|n" + std::to_string(i % 50) +
           "|billing=1,cpu=1,gres/gpu:h100=1,gres/gpu=1,node=1|0:0|sweep 'α=" + std::to_string(i) +
           "' | \"ü\"\n";
  }
  return out;
}

// Each task's GPU (node n<i % 50>, GPU i / 50) at i / 10 % utilization, labelled with the task.
void add_series(FakePromqlSource& src) {
  for (int i = 0; i < kTasks; ++i) {
    const tsdb::Labels labels = {{"__name__", "gpuscope_gpu_util_ratio"},
                                 {"uuid", "GPU-" + std::to_string(i)},
                                 {"gpu", std::to_string(i / 50)},
                                 {"hostname", "n" + std::to_string(i % 50)},
                                 {"slurm_job_id", raw_id(i)}};
    src.add(labels, every10s(i, i + 100, i / 1000.0));
  }
}

void expect_every_task(const std::vector<SiteJob>& jobs, const AggregateRead& read) {
  ASSERT_EQ(read.by_job.size(), static_cast<std::size_t>(kTasks));
  for (int i = 0; i < kTasks; ++i) {
    const auto& gpus = read.by_job.at(raw_id(i));
    ASSERT_EQ(gpus.size(), 1U) << i;
    EXPECT_EQ(gpus[0].key, "GPU-" + std::to_string(i));
    EXPECT_NEAR(gpus[0].util_pct.value_or(-1), i / 10.0, 1e-9) << i;
    EXPECT_DOUBLE_EQ(gpus[0].samples, 11) << i;
  }
  EXPECT_EQ(jobs.size(), static_cast<std::size_t>(kTasks));
}

TEST(ArrayTasks, AThousandTasksAreAThousandRowsWithTheirOwnFigures) {
  const gpuscope::testing::FixedTimeZone zone("CET-1CEST,M3.5.0,M10.5.0/3");
  const SacctRead sacct = read_sacct_jobs(sacct_output(), kS + 86'400'000);
  ASSERT_EQ(sacct.jobs.size(), static_cast<std::size_t>(kTasks));
  EXPECT_EQ(sacct.unreadable_count, 0U);
  EXPECT_EQ(sacct.jobs[999].id, "8000");
  EXPECT_EQ(sacct.jobs[999].shown_id, "7000_999");
  EXPECT_EQ(sacct.jobs[999].name, "sweep 'α=999' | \"ü\"") << "JobName last: its '|' kept";
  EXPECT_EQ(sacct.jobs[999].start_ms, kS + 999 * kSecond);
  std::vector<AggregateJob> asked;
  for (const auto& j : sacct.jobs) asked.push_back({j.id, j.start_ms, j.end_ms, j.nodes, false});
  for (const auto kind : {tsdb::ServerKind::VictoriaMetrics, tsdb::ServerKind::Prometheus}) {
    SCOPED_TRACE(kind == tsdb::ServerKind::Prometheus ? "Prometheus" : "VictoriaMetrics");
    FakePromqlSource src;
    src.kind = kind;
    add_series(src);
    const AggregateRead read = testing::read_aggregates(src, asked);
    expect_every_task(sacct.jobs, read);
    if (kind == tsdb::ServerKind::VictoriaMetrics) {
      EXPECT_EQ(read.queries, 6U) << "two batches of 500, three queries each";
    }
  }
}

}  // namespace
}  // namespace gpuscope::fleet
