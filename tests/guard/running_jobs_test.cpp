// squeue --json into running GPU jobs: a real Slurm 22.05 answer recorded from the tests'
// cluster (plain numbers, state words, a salloc allocation, array tasks, a pending job, a job
// without GPUs) and 24.11's documented shape (set/infinite/number objects, state lists, typed
// gres, a heterogeneous component, a running job without a start time).
#include "guard/running_jobs.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.hpp"
#include "util/small_file.hpp"

namespace gpuscope::guard {
namespace {

std::string fixture(const std::string& name) {
  const auto text =
      util::read_small_file(std::string(GPUSCOPE_TEST_FIXTURE_DIR) + "/squeue/" + name, 1 << 20);
  if (!text) throw std::runtime_error(text.error().reason);
  return *text;
}

const RunningJob* find(const SqueueRead& read, const std::string& shown) {
  const auto it = std::find_if(read.jobs.begin(), read.jobs.end(),
                               [&](const RunningJob& j) { return j.shown_id == shown; });
  return it == read.jobs.end() ? nullptr : &*it;
}

TEST(SqueueJson, Slurm2205AsRecordedFromARealCluster) {
  const SqueueRead read = read_squeue_json(fixture("slurm-22.05.json"));
  EXPECT_EQ(read.slurm_version, "22.05.8");
  EXPECT_EQ(read.jobs.size(), 5u);  // 1, 2 and the three array tasks
  EXPECT_EQ(read.not_running, 1u);  // the pending job
  EXPECT_EQ(read.without_gpus, 1u);
  EXPECT_EQ(read.unreadable_count, 0u);
  const RunningJob* batch = find(read, "1");
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(batch->name, "idle job|x");
  EXPECT_EQ(batch->gpus, 2);
  EXPECT_TRUE(batch->batch);
  EXPECT_FALSE(batch->time_limit_s);
  EXPECT_EQ(batch->nodes, std::vector<std::string>{"n1"});
  EXPECT_EQ(batch->start_ms, 1795948930000);
  const RunningJob* salloc = find(read, "2");
  ASSERT_NE(salloc, nullptr);
  EXPECT_FALSE(salloc->batch);
  const RunningJob* task = find(read, "3_1");
  ASSERT_NE(task, nullptr);
  EXPECT_EQ(task->id, "7");  // the task's own id: what the exporters label
  EXPECT_EQ(task->time_limit_s, 1800);
}

TEST(SqueueJson, Slurm2411sObjectsAndLists) {
  const SqueueRead read = read_squeue_json(fixture("slurm-24.11.json"));
  EXPECT_EQ(read.slurm_version, "24.11.3");
  ASSERT_EQ(read.jobs.size(), 3u);
  EXPECT_EQ(read.not_running, 1u);
  EXPECT_EQ(read.without_gpus, 1u);
  ASSERT_EQ(read.unreadable_count, 1u);
  EXPECT_NE(read.unreadable[0].find("job 552: a running job without a start_time"),
            std::string::npos);
  const RunningJob& big = read.jobs[0];
  EXPECT_EQ(big.shown_id, "525");
  EXPECT_EQ(big.name, "train \"big\"|v2");
  EXPECT_EQ(big.gpus, 8);
  EXPECT_EQ(big.gpu_model, "h100");
  EXPECT_EQ(big.nodes, (std::vector<std::string>{"gpu001", "gpu002"}));
  EXPECT_EQ(big.time_limit_s, 1440 * 60);
  EXPECT_EQ(read.jobs[1].shown_id, "528_3");
  EXPECT_EQ(read.jobs[1].id, "531");
  EXPECT_FALSE(read.jobs[1].time_limit_s);  // infinite
  EXPECT_EQ(read.jobs[2].shown_id, "540+1");
  EXPECT_FALSE(read.jobs[2].batch);
  EXPECT_EQ(read.jobs[2].qos, "interactive");
}

TEST(SqueueJson, WhatIsNotSqueuesJsonIsAnError) {
  EXPECT_THROW(read_squeue_json("squeue: error: Invalid user"), Error);
  EXPECT_THROW(read_squeue_json("{\"meta\": {}}"), Error);
  EXPECT_THROW(read_squeue_json("{\"jobs\": {}}"), Error);
}

TEST(SqueueJson, ARecordOfTheWrongShapeIsCountedNotGuessed) {
  const SqueueRead read = read_squeue_json(
      R"({"jobs": [5, {"job_id": "x"}, {"job_id": 9, "job_state": 3},
          {"job_id": 10, "job_state": "RUNNING", "user_name": "u", "start_time": "soon",
           "nodes": "n1", "tres_alloc_str": "gres/gpu=1"}]})");
  EXPECT_TRUE(read.jobs.empty());
  EXPECT_EQ(read.unreadable_count, 4u);
  EXPECT_EQ(read.unreadable.size(), 4u);
}

}  // namespace
}  // namespace gpuscope::guard
