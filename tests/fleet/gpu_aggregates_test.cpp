// Every job's GPUs summarised by the server, against a fake server that evaluates the queries
// it is sent (fake_promql_source.hpp): a job an exporter labels is the samples labelled with
// it (not the GPU's unlabelled ones, those a little outside its window yes), every figure in
// the catalog's units, each family's label with and without the exported_ prefix, list labels.
// Many jobs per query: gpu_aggregates_batch_test.cpp.
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
using testing::kSecond;
using testing::occurrences;
using testing::only_gpu;
using testing::read_aggregates;
using testing::series;

const tsdb::Labels kGpuA = {
    {"uuid", "GPU-A"}, {"gpu", "0"}, {"hostname", "n1"}, {"modelName", "NVIDIA H100 80GB HBM3"}};
const tsdb::Labels kNoUuid = {{"gpu", "0"}, {"hostname", "n1"}};

// Job 42 on `gpu` over [0 s, 100 s]. The exporter labels its samples from its third scrape
// (20 s) to its last one (120 s, after sacct's end): 5 idle ones, then 6 busy ones. The GPU's
// unlabelled samples before, during its first scrapes and after are not the job's.
void add_job_42(FakePromqlSource& src, const tsdb::Labels& gpu) {
  const std::string util = "gpuscope_gpu_util_ratio";
  src.add(series(util, gpu), every10s(-60, -10, 0.5));
  src.add(series(util, gpu), every10s(0, 10, 0.0));
  src.add(series(util, gpu, "42"), every10s(20, 60, 0.0));
  src.add(series(util, gpu, "42"), every10s(70, 120, 1.0));
  src.add(series(util, gpu), every10s(130, 160, 0.5));
}

TEST(GpuAggregates, AJobsFiguresAreTheSamplesLabelledWithIt) {
  FakePromqlSource src;
  add_job_42(src, kGpuA);
  // Every other figure, in the exporter's units; the unlabelled samples are not the job's.
  const auto add = [&](const std::string& name, const tsdb::Labels& gpu, double first,
                       double rise = 0) {
    src.add(series(name, gpu, "42"), every10s(0, 100, first, rise));
    src.add(series(name, gpu), every10s(110, 200, first * 3 + 1, rise));
  };
  add("gpuscope_energy_joules_total", kGpuA, 640, 360);
  add("gpuscope_power_watts", kGpuA, 300);
  add("gpuscope_memory_used_bytes", kGpuA, 1e9, 7e8);
  add("gpuscope_memory_free_bytes", kGpuA, 72e9);
  add("gpuscope_sm_active_ratio", kGpuA, 0.4);
  add("gpuscope_sm_occupancy_ratio", kGpuA, 0.2);
  add("gpuscope_fp32_active_ratio", kGpuA, 0.1);
  add("gpuscope_tensor_active_ratio", kGpuA, 0.05);
  add("gpuscope_gpu_xid_errors_total", kGpuA, 0, 0.2);
  tsdb::Labels ecc = kGpuA;
  ecc["counter"] = "volatile";
  ecc["type"] = "uncorrected";
  add("gpuscope_gpu_ecc_errors_total", ecc, 5, 0.1);
  ecc["type"] = "corrected";
  add("gpuscope_gpu_ecc_errors_total", ecc, 0, 10);

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
  EXPECT_DOUBLE_EQ(g.samples, 11) << "the labelled samples, the last one after sacct's end";
  ASSERT_TRUE(g.util_pct && g.idle_share);
  EXPECT_NEAR(*g.util_pct, 600.0 / 11, 1e-9);
  EXPECT_NEAR(*g.idle_share, 5.0 / 11, 1e-9) << "the unlabelled idle samples at 0 and 10 s not";
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

// Clock skew: a node's clock ahead of or behind slurmctld's puts the samples its exporter labels
// with a job a little outside the job's window (pushed samples keep the node's times); within
// the minute of slack they are the job's, further out they are not.
TEST(GpuAggregates, ALabelledSampleCountsWithinTheSlackAroundTheJob) {
  FakePromqlSource src;
  const tsdb::Labels util = series("gpuscope_gpu_util_ratio", kGpuA, "42");
  // 60 s of slack either side of [0 s, 100 s + 999 ms].
  src.add(util, {{kS - 70 * kSecond, 0.0},
                 {kS - 50 * kSecond, 0.2},
                 {kS + 50 * kSecond, 0.4},
                 {kS + 160 * kSecond, 0.6},
                 {kS + 161 * kSecond, 0.0}});
  const auto r = read_aggregates(src, {job("42", 0, 100)});
  const GpuAggregate& g = only_gpu(r, "42");
  EXPECT_DOUBLE_EQ(g.samples, 3) << "-70 s and 161 s are past the slack";
  EXPECT_NEAR(g.util_pct.value_or(0), 40, 1e-9);
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

TEST(GpuAggregates, AGpuWithoutUuidIsKeyedByItsNodeAndIndex) {
  FakePromqlSource src;
  add_job_42(src, kNoUuid);
  const auto r = read_aggregates(src, {job("42", 0, 100)});
  const GpuAggregate& g = only_gpu(r, "42");
  EXPECT_EQ(g.key, "n1/gpu0");
  EXPECT_DOUBLE_EQ(g.samples, 11);
  EXPECT_NEAR(g.util_pct.value_or(0), 600.0 / 11, 1e-9);
  EXPECT_EQ(r.notes.count("42"), 0U);
}

TEST(GpuAggregates, AMigInstanceIsItsOwnGpu) {
  FakePromqlSource src;
  tsdb::Labels mig = kGpuA;
  mig["gpu_instance_id"] = "3";
  mig["mig_profile"] = "1g.10gb";
  add_job_42(src, mig);
  const auto r = read_aggregates(src, {job("42", 0, 100)});
  const GpuAggregate& g = only_gpu(r, "42");
  EXPECT_EQ(g.key, "GPU-A GI 3");
  EXPECT_EQ(g.mig_profile, "1g.10gb");
  EXPECT_DOUBLE_EQ(g.samples, 11);
}

TEST(GpuAggregates, AGpuSharedWithAnotherJobCountsOnlyItsLabelledSamples) {
  FakePromqlSource src;
  const std::string util = "gpuscope_gpu_util_ratio";
  src.add(series(util, kGpuA, "42"), every10s(0, 50, 1.0));
  src.add(series(util, kGpuA, "99"), every10s(60, 100, 0.2));
  const auto r = read_aggregates(src, {job("42", 0, 100), job("99", 0, 100)});
  EXPECT_TRUE(r.notes.empty()) << "a labelled job's samples are its own: nothing to note";
  EXPECT_DOUBLE_EQ(only_gpu(r, "42").samples, 6);
  EXPECT_NEAR(only_gpu(r, "42").util_pct.value_or(0), 100, 1e-9);
  EXPECT_DOUBLE_EQ(only_gpu(r, "99").samples, 5);
  EXPECT_NEAR(only_gpu(r, "99").util_pct.value_or(0), 20, 1e-9);
}

TEST(GpuAggregates, AJobNoSeriesNamesIsAbsentAfterEveryLabelIsAsked) {
  FakePromqlSource src;
  const auto r = read_aggregates(src, {job("77", 0, 100)});
  EXPECT_TRUE(r.by_job.empty());
  EXPECT_TRUE(r.matched_by.empty());
  std::string all;
  for (const auto& e : src.asked) all += e + "\n";
  for (const char* matcher :
       {"{slurm_job_id=~\"77\"}", "{exported_slurm_job_id=~\"77\"}",
        "{hpc_job=~\"(.*,)?(77)(,.*)?\"}", "{exported_hpc_job=~\"(.*,)?(77)(,.*)?\"}",
        "{jobid=~\"77\"}", "{exported_jobid=~\"77\"}"}) {
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

TEST(GpuAggregates, AListLabelNamingTwoJobsOfTheBatchCountsForBoth) {
  FakePromqlSource src;
  const tsdb::Labels gpu = {{"__name__", "DCGM_FI_DEV_GPU_UTIL"},
                            {"UUID", "GPU-D"},
                            {"gpu", "0"},
                            {"Hostname", "n3"},
                            {"hpc_job", "123,124"}};
  src.add(gpu, every10s(0, 100, 60));
  const auto r = read_aggregates(src, {job("123", 0, 100, {"n3"}), job("124", 0, 100, {"n3"})});
  for (const char* id : {"123", "124"}) {
    EXPECT_EQ(only_gpu(r, id).key, "GPU-D") << id;
    EXPECT_DOUBLE_EQ(only_gpu(r, id).samples, 11) << id;
    EXPECT_NEAR(only_gpu(r, id).util_pct.value_or(0), 60, 1e-9) << id;
  }
  bool asked = false;
  for (const auto& e : src.asked) {
    if (e.find("hpc_job") == std::string::npos) continue;
    asked = true;
    EXPECT_NE(e.find(R"(hpc_job=~"(.*,)?(123|124)(,.*)?")"), std::string::npos) << e;
    // Per name (Prometheus) grouped by the label; VictoriaMetrics' every-name shape groups by it
    // and the name, or answers each series with its labels (labelled_metricsql.cpp).
    EXPECT_TRUE(e.find("hpc_job)") != std::string::npos ||
                e.find("hpc_job, __name__") != std::string::npos || e.starts_with("label_match("))
        << "answers by the label: " << e;
  }
  EXPECT_TRUE(asked);
}

TEST(GpuAggregates, JobstatsLabelAndThePrefixedLabelAreFound) {
  FakePromqlSource src;
  src.add({{"__name__", "nvidia_gpu_duty_cycle"},
           {"uuid", "GPU-J"},
           {"minor_number", "1"},
           {"instance", "n4:9445"},
           {"jobid", "51"}},
          every10s(0, 100, 35));
  src.add(series("gpuscope_gpu_util_ratio",
                 {{"uuid", "GPU-B"}, {"gpu", "1"}, {"exported_slurm_job_id", "52"}}),
          every10s(0, 100, 0.45));
  const auto r = read_aggregates(src, {job("51", 0, 100, {"n4"}), job("52", 0, 100)});
  EXPECT_NE(r.matched_by.at("51").find("label jobid"), std::string::npos) << r.matched_by.at("51");
  EXPECT_EQ(only_gpu(r, "51").key, "GPU-J");
  EXPECT_NEAR(only_gpu(r, "51").util_pct.value_or(0), 35, 1e-9);
  EXPECT_EQ(r.matched_by.at("52"), "gpuscope serve's label exported_slurm_job_id");
  EXPECT_EQ(only_gpu(r, "52").key, "GPU-B");
  EXPECT_NEAR(only_gpu(r, "52").util_pct.value_or(0), 45, 1e-9);
}

}  // namespace
}  // namespace gpuscope::fleet
