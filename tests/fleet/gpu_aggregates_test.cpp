// Every job's GPUs summarised by the server, many jobs per query, against a fake server that
// evaluates the pieces it is sent (fake_promql_source.hpp): a job's GPUs read by UUID over its
// window when each has one, by the job's label otherwise (no UUID, a MIG instance, a GPU
// shared with another job), every figure in the catalog's units, and each answer on its job.
#include "fleet/gpu_aggregates.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "aggregate_test_data.hpp"
#include "fake_promql_source.hpp"

namespace gpuscope::fleet {
namespace {

using testing::every10s;
using testing::FakePromqlSource;
using testing::job;
using testing::kS;
using testing::occurrences;
using testing::only_gpu;
using testing::read_aggregates;
using testing::series;

const tsdb::Labels kGpuA = {
    {"uuid", "GPU-A"}, {"gpu", "0"}, {"hostname", "n1"}, {"modelName", "NVIDIA H100 80GB HBM3"}};
const tsdb::Labels kNoUuid = {{"gpu", "0"}, {"hostname", "n1"}};

// Job 42 on `gpu` over [0 s, 100 s]: 5 unlabelled idle samples first, then 6 labelled busy ones;
// samples of the same GPU before and after the job, which are not its.
void add_job_42(FakePromqlSource& src, const tsdb::Labels& gpu) {
  const std::string util = "gpuscope_gpu_util_ratio";
  src.add(series(util, gpu), every10s(-60, -10, 0.5));
  src.add(series(util, gpu), every10s(0, 40, 0.0));
  src.add(series(util, gpu, "42"), every10s(50, 100, 1.0));
  src.add(series(util, gpu), every10s(101, 130, 0.5));
}

TEST(GpuAggregates, GpusWithUuidsAreReadOverTheJobsWindowLabelledOrNot) {
  FakePromqlSource src;
  add_job_42(src, kGpuA);
  // Every other figure, in the exporter's units, some with the job's label and some without.
  src.add(series("gpuscope_energy_joules_total", kGpuA), every10s(-10, 100, 640, 360));
  src.add(series("gpuscope_power_watts", kGpuA, "42"), every10s(0, 100, 300));
  src.add(series("gpuscope_memory_used_bytes", kGpuA, "42"), every10s(0, 100, 1e9, 7e8));
  src.add(series("gpuscope_memory_free_bytes", kGpuA), every10s(0, 100, 72e9));
  src.add(series("gpuscope_sm_active_ratio", kGpuA, "42"), every10s(0, 100, 0.4));
  src.add(series("gpuscope_sm_occupancy_ratio", kGpuA, "42"), every10s(0, 100, 0.2));
  src.add(series("gpuscope_fp32_active_ratio", kGpuA, "42"), every10s(0, 100, 0.1));
  src.add(series("gpuscope_tensor_active_ratio", kGpuA, "42"), every10s(0, 100, 0.05));
  src.add(series("gpuscope_gpu_xid_errors_total", kGpuA), every10s(0, 100, 0, 0.2));
  tsdb::Labels ecc = kGpuA;
  ecc["counter"] = "volatile";
  ecc["type"] = "uncorrected";
  src.add(series("gpuscope_gpu_ecc_errors_total", ecc), every10s(0, 100, 5, 0.1));
  ecc["type"] = "corrected";
  src.add(series("gpuscope_gpu_ecc_errors_total", ecc), every10s(0, 100, 0, 10));

  const auto r = read_aggregates(src, {job("42", 0, 100)});
  EXPECT_EQ(r.matched_by.at("42"), "gpuscope serve's label slurm_job_id");
  EXPECT_EQ(r.notes.count("42"), 0U);
  const GpuAggregate& g = only_gpu(r, "42");
  EXPECT_EQ(g.key, "GPU-A");
  EXPECT_EQ(g.node, "n1");
  EXPECT_EQ(g.index, 0U);
  EXPECT_EQ(g.model, "NVIDIA H100 80GB HBM3");
  EXPECT_FALSE(g.mig_profile);
  EXPECT_EQ(g.family, "gpuscope serve");
  EXPECT_DOUBLE_EQ(g.samples, 11) << "the job's unlabelled samples count, none outside it";
  ASSERT_TRUE(g.util_pct && g.idle_share);
  EXPECT_NEAR(*g.util_pct, 600.0 / 11, 1e-9);
  EXPECT_NEAR(*g.idle_share, 5.0 / 11, 1e-9);
  ASSERT_TRUE(g.energy_rise_j);
  EXPECT_NEAR(*g.energy_rise_j, 3600, 1e-6) << "J: the family's mJ divided by 1000";
  EXPECT_NEAR(g.power_mean_w.value_or(0), 300, 1e-9);
  EXPECT_NEAR(g.memory_peak_bytes.value_or(0), 8e9, 1);
  EXPECT_NEAR(g.memory_used_mean_bytes.value_or(0), 4.5e9, 1);
  EXPECT_NEAR(g.memory_free_mean_bytes.value_or(0), 72e9, 1);
  EXPECT_FALSE(g.memory_total_bytes) << "gpuscope serve exports no size series";
  EXPECT_NEAR(g.sm_active_pct.value_or(0), 40, 1e-9);
  EXPECT_NEAR(g.occupancy_pct.value_or(0), 20, 1e-9);
  EXPECT_NEAR(g.flop_pct.value_or(0), 15, 1e-9) << "FP32 + tensor, the pipes exported";
  EXPECT_NEAR(g.health_faults.value_or(-1), 3, 1e-9) << "2 Xids and 1 uncorrected ECC error";
}

TEST(GpuAggregates, PrometheusGetsTheSameIdleShareFromItsSubquery) {
  FakePromqlSource src;
  src.kind = tsdb::ServerKind::Prometheus;
  add_job_42(src, kGpuA);
  const auto r = read_aggregates(src, {job("42", 0, 100)});
  EXPECT_NEAR(only_gpu(r, "42").idle_share.value_or(-1), 5.0 / 11, 1e-9);
  bool asked = false;
  for (const auto& e : src.asked) asked = asked || e.find(" <= bool 0.01)[") != std::string::npos;
  EXPECT_TRUE(asked) << "1 % is 0.01 in the ratio the family exports";
}

TEST(GpuAggregates, AGpuWithoutUuidIsReadByTheJobsLabel) {
  FakePromqlSource src;
  add_job_42(src, kNoUuid);
  const auto r = read_aggregates(src, {job("42", 0, 100)});
  const GpuAggregate& g = only_gpu(r, "42");
  EXPECT_EQ(g.key, "n1/gpu0");
  EXPECT_DOUBLE_EQ(g.samples, 6) << "only the samples labelled with the job";
  EXPECT_NEAR(g.util_pct.value_or(0), 100, 1e-9);
  EXPECT_NEAR(g.idle_share.value_or(-1), 0, 1e-9);
}

TEST(GpuAggregates, AMigInstanceIsReadByTheJobsLabel) {
  FakePromqlSource src;
  tsdb::Labels mig = kGpuA;
  mig["gpu_instance_id"] = "3";
  mig["mig_profile"] = "1g.10gb";
  add_job_42(src, mig);
  const auto r = read_aggregates(src, {job("42", 0, 100)});
  const GpuAggregate& g = only_gpu(r, "42");
  EXPECT_EQ(g.key, "GPU-A GI 3");
  EXPECT_EQ(g.mig_profile, "1g.10gb");
  EXPECT_DOUBLE_EQ(g.samples, 6) << "the instance's unlabelled samples may be another job's";
}

TEST(GpuAggregates, AGpuSharedWithAnotherJobCountsOnlyItsLabelledSamples) {
  FakePromqlSource src;
  const std::string util = "gpuscope_gpu_util_ratio";
  src.add(series(util, kGpuA, "42"), every10s(0, 50, 1.0));
  src.add(series(util, kGpuA, "99"), every10s(60, 100, 0.2));
  const auto r = read_aggregates(src, {job("42", 0, 100), job("99", 0, 100)});
  for (const char* id : {"42", "99"}) {
    ASSERT_EQ(r.notes.count(id), 1U) << id;
    ASSERT_EQ(r.notes.at(id).size(), 1U) << id;
    EXPECT_NE(r.notes.at(id)[0].find("carried another job's slurm_job_id label"), std::string::npos)
        << r.notes.at(id)[0];
  }
  EXPECT_DOUBLE_EQ(only_gpu(r, "42").samples, 6);
  EXPECT_NEAR(only_gpu(r, "42").util_pct.value_or(0), 100, 1e-9);
  EXPECT_DOUBLE_EQ(only_gpu(r, "99").samples, 5);
  EXPECT_NEAR(only_gpu(r, "99").util_pct.value_or(0), 20, 1e-9);
}

// Four jobs in one query: three GPUs at once, then the first GPU again for a later job.
std::vector<AggregateJob> four_jobs(FakePromqlSource& src) {
  const std::string util = "gpuscope_gpu_util_ratio";
  std::vector<AggregateJob> jobs;
  for (int i = 1; i <= 3; ++i) {
    tsdb::Labels gpu = {
        {"uuid", "GPU-" + std::to_string(i)}, {"gpu", std::to_string(i - 1)}, {"hostname", "n1"}};
    src.add(series(util, gpu, std::to_string(i)), every10s(0, 100, 0.1 * i));
    jobs.push_back(job(std::to_string(i), 0, 100));
  }
  tsdb::Labels first = {{"uuid", "GPU-1"}, {"gpu", "0"}, {"hostname", "n1"}};
  src.add(series(util, first), every10s(110, 190, 0.0));  // between the jobs: neither's
  src.add(series(util, first, "4"), every10s(200, 300, 0.9));
  jobs.push_back(job("4", 200, 300));
  return jobs;
}

TEST(GpuAggregates, ManyJobsPerQueryEachAnswerOnItsJob) {
  FakePromqlSource src;
  const auto jobs = four_jobs(src);
  const auto r = read_aggregates(src, jobs);
  EXPECT_NEAR(only_gpu(r, "1").util_pct.value_or(0), 10, 1e-9);
  EXPECT_NEAR(only_gpu(r, "2").util_pct.value_or(0), 20, 1e-9);
  EXPECT_NEAR(only_gpu(r, "3").util_pct.value_or(0), 30, 1e-9);
  EXPECT_NEAR(only_gpu(r, "4").util_pct.value_or(0), 90, 1e-9) << "its own window only";
  EXPECT_DOUBLE_EQ(only_gpu(r, "4").samples, 11);
  EXPECT_EQ(r.queries, src.asked.size());
  for (const auto& e : src.asked) {
    EXPECT_EQ(occurrences(e, "label_replace("), 4U) << e;
  }
}

TEST(GpuAggregates, JobsPerQueryBatchesAndGivesTheSameFigures) {
  FakePromqlSource all_src, batched_src;
  const auto jobs = four_jobs(all_src);
  four_jobs(batched_src);
  const auto all = read_aggregates(all_src, jobs);
  const auto batched = read_aggregates(batched_src, jobs, 3);
  for (const auto& e : batched_src.asked) EXPECT_LE(occurrences(e, "label_replace("), 3U) << e;
  EXPECT_EQ(batched.queries, 2 * all.queries) << "two batches, each asking every figure";
  ASSERT_EQ(batched.by_job.size(), 4U);
  for (const auto& [id, gpus] : all.by_job) {
    ASSERT_EQ(batched.by_job.at(id).size(), gpus.size()) << id;
    EXPECT_EQ(batched.by_job.at(id)[0].util_pct, gpus[0].util_pct) << id;
    EXPECT_EQ(batched.by_job.at(id)[0].samples, gpus[0].samples) << id;
  }
}

TEST(GpuAggregates, AServerErrorFailsTheRead) {
  FakePromqlSource src;
  const auto jobs = four_jobs(src);
  src.fail_at = 2;
  try {
    read_aggregates(src, jobs);
    FAIL() << "a failed query was passed over";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("503"), std::string::npos) << e.what();
  }
}

TEST(GpuAggregates, AJobNoSeriesNamesIsAbsentAfterEveryConventionIsAsked) {
  FakePromqlSource src;
  const auto r = read_aggregates(src, {job("77", 0, 100)});
  EXPECT_TRUE(r.by_job.empty());
  EXPECT_TRUE(r.matched_by.empty());
  std::string all;
  for (const auto& e : src.asked) all += e + "\n";
  for (const char* matcher :
       {"{slurm_job_id=\"77\"}", "{exported_slurm_job_id=\"77\"}", "{hpc_job=~\"(.*,)?77(,.*)?\"}",
        "{jobid=\"77\"}", "{exported_jobid=\"77\"}"}) {
    EXPECT_NE(all.find(matcher), std::string::npos) << matcher << " not asked in\n" << all;
  }
}

TEST(GpuAggregates, DcgmExportersListLabelFindsTheJobAndNotAPrefixOfIt) {
  FakePromqlSource src;
  const tsdb::Labels gpu = {{"__name__", "DCGM_FI_DEV_GPU_UTIL"},
                            {"UUID", "GPU-D"},
                            {"gpu", "0"},
                            {"Hostname", "n3"},
                            {"hpc_job", "41,42"}};
  src.add(gpu, every10s(0, 100, 55));
  const auto r = read_aggregates(src, {job("42", 0, 100, {"n3"}), job("4", 0, 100, {"n3"})});
  EXPECT_EQ(r.matched_by.at("42"), "dcgm-exporter's label hpc_job");
  const GpuAggregate& g = only_gpu(r, "42");
  EXPECT_EQ(g.key, "GPU-D");
  EXPECT_EQ(g.node, "n3");
  EXPECT_EQ(g.family, "dcgm-exporter");
  EXPECT_NEAR(g.util_pct.value_or(0), 55, 1e-9);
  EXPECT_EQ(r.by_job.count("4"), 0U) << "4 is not in 41,42";
}

TEST(GpuAggregates, HostileJobIdsAreAskedAsThemselves) {
  FakePromqlSource src;
  const std::string id = "4\"} or vector(1) # \\ .*";
  src.add(series("gpuscope_gpu_util_ratio", kNoUuid, id), every10s(0, 100, 0.25));
  src.add(series("gpuscope_gpu_util_ratio", kNoUuid, "4"), every10s(0, 100, 0.75));
  const auto r = read_aggregates(src, {job(id, 0, 100), job("4", 0, 100)});
  EXPECT_NEAR(only_gpu(r, id).util_pct.value_or(0), 25, 1e-9);
  EXPECT_NEAR(only_gpu(r, "4").util_pct.value_or(0), 75, 1e-9);
}

}  // namespace
}  // namespace gpuscope::fleet
