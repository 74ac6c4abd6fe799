// How the aggregates find the GPUs of jobs that no series labels with them: jobstats' job-id
// series (its value is the job's id at the middle of the window), and the GPUs of nodes an
// exclusive job had to itself; neither for a job that shared its nodes.
#include <gtest/gtest.h>

#include <string>

#include "aggregate_test_data.hpp"
#include "fake_promql_source.hpp"
#include "fleet/gpu_aggregates.hpp"

namespace gpuscope::fleet {
namespace {

using testing::every10s;
using testing::FakePromqlSource;
using testing::job;
using testing::only_gpu;
using testing::read_aggregates;

TEST(GpuAggregates, UnlabelledGpusOfAJobThatSharedItsNodesAreNotAsked) {
  FakePromqlSource src;
  const auto r = read_aggregates(src, {job("77", 0, 100)});
  EXPECT_TRUE(r.by_job.empty());
  std::string all;
  for (const auto& e : src.asked) all += e + "\n";
  EXPECT_NE(all.find("(nvidia_gpu_jobId @ 1795924250.499 == 77)"), std::string::npos)
      << "jobstats' job id at the middle of the window";
  EXPECT_EQ(all.find("hostname=~"), std::string::npos) << "a shared node's GPUs are not its";
}

TEST(GpuAggregates, JobstatsJobIdSeriesAndExclusiveNodesFindUnlabelledGpus) {
  FakePromqlSource src;
  const tsdb::Labels jobstats = {{"uuid", "GPU-J"}, {"minor_number", "1"}, {"instance", "n4:9445"}};
  tsdb::Labels id = jobstats;
  id["__name__"] = "nvidia_gpu_jobId";
  src.add(id, every10s(0, 100, 77));
  tsdb::Labels duty = jobstats;
  duty["__name__"] = "nvidia_gpu_duty_cycle";
  src.add(duty, every10s(0, 100, 35));
  tsdb::Labels whole = {{"__name__", "gpuscope_gpu_util_ratio"},
                        {"uuid", "GPU-E"},
                        {"gpu", "0"},
                        {"hostname", "n5.cluster"}};
  src.add(whole, every10s(0, 100, 0.65));
  AggregateJob exclusive = job("78", 0, 100, {"n5"});
  exclusive.exclusive = true;
  const auto r = read_aggregates(src, {job("77", 0, 100, {"n4"}), exclusive});
  EXPECT_EQ(r.matched_by.at("77"), "jobstats' nvidia_gpu_jobId series");
  EXPECT_EQ(only_gpu(r, "77").key, "GPU-J");
  EXPECT_NEAR(only_gpu(r, "77").util_pct.value_or(0), 35, 1e-9);
  EXPECT_NE(r.matched_by.at("78").find("nodes"), std::string::npos) << r.matched_by.at("78");
  EXPECT_EQ(only_gpu(r, "78").key, "GPU-E");
  EXPECT_NEAR(only_gpu(r, "78").util_pct.value_or(0), 65, 1e-9);
}

}  // namespace
}  // namespace gpuscope::fleet
