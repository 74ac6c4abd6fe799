// VictoriaMetrics' every-name queries (labelled_metricsql.cpp) against the per-name ones
// Prometheus gets, on the same series through the fake server: every figure of every GPU equal,
// for gpuscope serve's names and dcgm-exporter's list label, with a GPU whose samples are split
// over two series (an exporter restarted under another instance) and health counters beside
// series of the same name that do not count; three queries a batch, none naming a series.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "aggregate_test_data.hpp"
#include "fake_promql_source.hpp"
#include "fleet/gpu_aggregates.hpp"

namespace gpuscope::fleet {
namespace {

using testing::every10s;
using testing::FakePromqlSource;
using testing::job;
using testing::read_aggregates;

void add(FakePromqlSource& src, const std::string& name, tsdb::Labels labels,
         std::vector<tsdb::Point> points) {
  labels["__name__"] = name;
  src.add(std::move(labels), std::move(points));
}

// Two jobs of gpuscope serve's series on node n1: job 7 on GPU-A (its samples split over two
// series from 50 s on: the exporter's pod restarted) and GPU-B, job 8 on GPU-B later.
void gpuscope_site(FakePromqlSource& src) {
  const auto gpu = [](const std::string& uuid, const std::string& index, const std::string& job,
                      const std::string& pod) {
    return tsdb::Labels{
        {"uuid", uuid}, {"gpu", index}, {"hostname", "n1"}, {"pod", pod}, {"slurm_job_id", job}};
  };
  const auto a1 = gpu("GPU-A", "0", "7", "exporter-x"), a2 = gpu("GPU-A", "0", "7", "exporter-y");
  const auto b7 = gpu("GPU-B", "1", "7", "exporter-x"), b8 = gpu("GPU-B", "1", "8", "exporter-y");
  for (const auto& [name, base] :
       std::vector<std::pair<std::string, double>>{{"gpuscope_gpu_util_ratio", 0.3},
                                                   {"gpuscope_sm_active_ratio", 0.2},
                                                   {"gpuscope_sm_occupancy_ratio", 0.1},
                                                   {"gpuscope_fp32_active_ratio", 0.05},
                                                   {"gpuscope_tensor_active_ratio", 0.15},
                                                   {"gpuscope_memory_used_bytes", 4e10},
                                                   {"gpuscope_memory_free_bytes", 4e10},
                                                   {"gpuscope_power_watts", 300}}) {
    add(src, name, a1, every10s(0, 40, 0.0));  // idle, then busy in the second series
    add(src, name, a2, every10s(50, 100, base, base / 10));
    add(src, name, b7, every10s(0, 100, base / 2));
    add(src, name, b8, every10s(200, 300, base * 2, -base / 20));
  }
  // The energy counter rises across both series; the health counters rise on GPU-A only.
  add(src, "gpuscope_energy_joules_total", a1, every10s(0, 40, 1000, 100));
  add(src, "gpuscope_energy_joules_total", a2, every10s(50, 100, 1500, 300));
  add(src, "gpuscope_energy_joules_total", b7, every10s(0, 100, 50, 50));
  add(src, "gpuscope_gpu_xid_errors_total", a2, every10s(50, 100, 0, 1));
  auto ecc = a1;
  ecc["type"] = "uncorrected";
  ecc["counter"] = "volatile";
  add(src, "gpuscope_gpu_ecc_errors_total", ecc, every10s(0, 40, 2, 1));
  ecc["type"] = "corrected";  // not a fault: left out by its labels
  add(src, "gpuscope_gpu_ecc_errors_total", ecc, every10s(0, 40, 0, 100));
  add(src, "gpuscope_gpu_row_remap_failure", b8, every10s(200, 300, 1));
}

// dcgm-exporter's names and list label: a GPU shared by jobs 123 and 124, XID codes changing.
void dcgm_site(FakePromqlSource& src) {
  const tsdb::Labels shared = {
      {"UUID", "GPU-D"}, {"gpu", "0"}, {"Hostname", "n3"}, {"hpc_job", "123,124"}};
  add(src, "DCGM_FI_DEV_GPU_UTIL", shared, every10s(0, 100, 60, -5));
  add(src, "DCGM_FI_PROF_SM_ACTIVE", shared, every10s(0, 100, 0.4));
  add(src, "DCGM_FI_DEV_FB_USED", shared, every10s(0, 100, 2000, 100));
  add(src, "DCGM_FI_DEV_FB_FREE", shared, every10s(0, 100, 78000, -100));
  add(src, "DCGM_FI_DEV_FB_TOTAL", shared, every10s(0, 100, 81559));
  add(src, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", shared, every10s(0, 100, 5e6, 2e4));
  add(src, "DCGM_FI_DEV_POWER_USAGE", shared, every10s(0, 100, 250, 3));
  add(src, "DCGM_FI_DEV_XID_ERRORS", shared,
      {{testing::kS, 0}, {testing::kS + 30'000, 79}, {testing::kS + 60'000, 0}});
}

void expect_same(const std::optional<double>& vm, const std::optional<double>& prom,
                 const std::string& what) {
  ASSERT_EQ(vm.has_value(), prom.has_value()) << what;
  if (vm) {
    EXPECT_NEAR(*vm, *prom, 1e-9 * std::max(1.0, std::abs(*prom))) << what;
  }
}

void expect_same_reads(const AggregateRead& vm, const AggregateRead& prom) {
  ASSERT_EQ(vm.by_job.size(), prom.by_job.size());
  EXPECT_EQ(vm.matched_by, prom.matched_by);
  for (const auto& [id, gpus] : prom.by_job) {
    ASSERT_EQ(vm.by_job.count(id), 1U) << id;
    const auto& other = vm.by_job.at(id);
    ASSERT_EQ(other.size(), gpus.size()) << id;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      const GpuAggregate &p = gpus[i], &v = other[i];
      const std::string at = "job " + id + " " + p.key + ": ";
      EXPECT_EQ(v.key, p.key) << at;
      EXPECT_EQ(v.node, p.node) << at;
      EXPECT_EQ(v.index, p.index) << at;
      EXPECT_EQ(v.family, p.family) << at;
      EXPECT_DOUBLE_EQ(v.samples, p.samples) << at;
      expect_same(v.util_pct, p.util_pct, at + "util");
      expect_same(v.idle_share, p.idle_share, at + "idle share");
      expect_same(v.sm_active_pct, p.sm_active_pct, at + "SM active");
      expect_same(v.occupancy_pct, p.occupancy_pct, at + "occupancy");
      expect_same(v.flop_pct, p.flop_pct, at + "FLOP");
      expect_same(v.memory_peak_bytes, p.memory_peak_bytes, at + "memory peak");
      expect_same(v.memory_used_mean_bytes, p.memory_used_mean_bytes, at + "memory used");
      expect_same(v.memory_free_mean_bytes, p.memory_free_mean_bytes, at + "memory free");
      expect_same(v.memory_total_bytes, p.memory_total_bytes, at + "memory total");
      expect_same(v.energy_rise_j, p.energy_rise_j, at + "energy");
      expect_same(v.power_mean_w, p.power_mean_w, at + "power");
      expect_same(v.health_faults, p.health_faults, at + "health");
    }
  }
}

AggregateRead read_as(tsdb::ServerKind kind, void (*site)(FakePromqlSource&),
                      const std::vector<AggregateJob>& jobs, FakePromqlSource* keep = nullptr) {
  FakePromqlSource src;
  src.kind = kind;
  site(src);
  auto r = read_aggregates(src, jobs);
  if (keep != nullptr) keep->asked = src.asked;
  return r;
}

TEST(GpuAggregatesMetricsql, GpuscopeServesFiguresEqualThePerNameQueries) {
  const std::vector<AggregateJob> jobs = {job("7", 0, 100), job("8", 200, 300)};
  const auto vm = read_as(tsdb::ServerKind::VictoriaMetrics, gpuscope_site, jobs);
  const auto prom = read_as(tsdb::ServerKind::Prometheus, gpuscope_site, jobs);
  expect_same_reads(vm, prom);
  // Figures worked out here: GPU-A's samples are 5 idle ones and 6 of the second instance.
  const GpuAggregate* a = nullptr;
  for (const auto& g : vm.by_job.at("7")) {
    if (g.key == "GPU-A") a = &g;
  }
  ASSERT_NE(a, nullptr);
  EXPECT_DOUBLE_EQ(a->samples, 11);
  EXPECT_NEAR(a->idle_share.value_or(-1), 5.0 / 11, 1e-12);
  EXPECT_NEAR(a->util_pct.value_or(-1), 100 * (6 * 0.3 + 0.03 * 15) / 11, 1e-9);
  EXPECT_NEAR(a->energy_rise_j.value_or(-1), 2000, 1e-9)
      << "1000 J, then 3000 J in the other series";
  // xid 0 → 5 and uncorrected ECC 2 → 6: 9 faults; the corrected counter is not one.
  EXPECT_DOUBLE_EQ(a->health_faults.value_or(-1), 9);
}

TEST(GpuAggregatesMetricsql, DcgmsListLabelFiguresEqualThePerNameQueries) {
  const std::vector<AggregateJob> jobs = {job("123", 0, 100, {"n3"}), job("124", 0, 100, {"n3"})};
  const auto vm = read_as(tsdb::ServerKind::VictoriaMetrics, dcgm_site, jobs);
  const auto prom = read_as(tsdb::ServerKind::Prometheus, dcgm_site, jobs);
  expect_same_reads(vm, prom);
  EXPECT_DOUBLE_EQ(vm.by_job.at("123").front().health_faults.value_or(-1), 2) << "0 → 79 → 0";
}

TEST(GpuAggregatesMetricsql, ThreeQueriesABatchAndNoneNamesASeries) {
  const std::vector<AggregateJob> jobs = {job("7", 0, 100), job("8", 200, 300)};
  FakePromqlSource asked;
  const auto vm = read_as(tsdb::ServerKind::VictoriaMetrics, gpuscope_site, jobs, &asked);
  EXPECT_EQ(vm.by_job.size(), 2U);
  EXPECT_EQ(vm.queries, 3U) << "sums and counts, extremes, the idle count";
  ASSERT_EQ(asked.asked.size(), 3U);
  for (const auto& e : asked.asked) {
    const auto at = e.find(R"({slurm_job_id=~"7|8"}[)");
    ASSERT_NE(at, std::string::npos) << e;
    EXPECT_TRUE(e[at - 1] == '(' || e[at - 1] == ' ') << "a selector without a name: " << e;
    EXPECT_NE(e.find(" keep_metric_names, \"__name__\", \"^("), std::string::npos) << e;
  }
  const auto prom = read_as(tsdb::ServerKind::Prometheus, gpuscope_site, jobs, &asked);
  EXPECT_GT(prom.queries, 15U) << "one per figure and name";
}

// guard asks for the utilization only (its idle windows): the same utilization figures, nothing
// else, and the server reads only the utilization series (VictoriaMetrics: a __name__ matcher in
// the selector; Prometheus: only those names asked).
TEST(GpuAggregatesMetricsql, TheUtilizationOnlyReadsItsOwnSeries) {
  const std::vector<AggregateJob> jobs = {job("7", 0, 100), job("8", 200, 300)};
  for (const auto kind : {tsdb::ServerKind::VictoriaMetrics, tsdb::ServerKind::Prometheus}) {
    FakePromqlSource src;
    src.kind = kind;
    gpuscope_site(src);
    const AggregateRead all = testing::read_aggregates(src, jobs);
    src.asked.clear();
    AggregateOptions options;
    options.figures = Figures::Utilization;
    const AggregateRead util = read_gpu_aggregates(src, jobs, options);
    ASSERT_EQ(util.by_job.size(), all.by_job.size());
    for (const auto& [id, gpus] : all.by_job) {
      ASSERT_EQ(util.by_job.at(id).size(), gpus.size()) << id;
      for (std::size_t i = 0; i < gpus.size(); ++i) {
        const GpuAggregate& u = util.by_job.at(id)[i];
        EXPECT_DOUBLE_EQ(u.samples, gpus[i].samples);
        expect_same(u.util_pct, gpus[i].util_pct, id + " util");
        expect_same(u.idle_share, gpus[i].idle_share, id + " idle");
        EXPECT_FALSE(u.memory_peak_bytes || u.power_mean_w || u.energy_rise_j || u.health_faults);
      }
    }
    for (const auto& e : src.asked) {
      EXPECT_EQ(e.find("memory"), std::string::npos) << e;
      EXPECT_EQ(e.find("power"), std::string::npos) << e;
      if (kind == tsdb::ServerKind::VictoriaMetrics && e.find("label_match") != std::string::npos) {
        EXPECT_NE(e.find(R"(,__name__=~"^(gpuscope_gpu_util_ratio)$"})"), std::string::npos) << e;
      }
    }
  }
}

}  // namespace
}  // namespace gpuscope::fleet
