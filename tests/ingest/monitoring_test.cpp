// ingest::read_job over a fake tsdb::Source: each exporter family's names and units, the label
// conventions in their order, the fallbacks, and the awkward data (duplicates, resets, gaps,
// restarts, shared GPUs, missing nodes, nothing at all), read back from the run database.
#include "ingest/monitoring/monitoring.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "core/error.hpp"
#include "exporter/metric_names.hpp"
#include "fake_source.hpp"
#include "ingest/monitoring/exporter_families.hpp"
#include "ingest/monitoring/exporter_labels.hpp"
#include "ingest/monitoring/job_series.hpp"
#include "store/run_reader.hpp"
#include "support/temp_dir.hpp"
#include "tsdb/promql.hpp"

namespace gpuscope::ingest {
namespace {

using testing::FakeSource;
constexpr std::int64_t kT0 = 1'700'000'000'000;
constexpr std::int64_t kScrape = 15'000;

std::vector<tsdb::Point> points(std::vector<double> values, std::int64_t from = kT0,
                                std::int64_t step = kScrape) {
  std::vector<tsdb::Point> out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    out.push_back({from + static_cast<std::int64_t>(i) * step, values[i]});
  }
  return out;
}

std::vector<double> same(double v, std::size_t n = 10) {
  return std::vector<double>(n, v);
}

tsdb::Labels with(tsdb::Labels base, const std::string& name) {
  base["__name__"] = name;
  return base;
}

JobWindow slurm_job(std::vector<std::string> nodes = {"n1"}) {
  JobWindow job;
  job.kind = "slurm";
  job.id = "123";
  job.window = {kT0, kT0 + 9 * kScrape};
  job.nodes = std::move(nodes);
  return job;
}

struct Db {
  std::vector<store::StoredRun> runs;
  std::map<std::int64_t, std::vector<DeviceDescription>> devices;
  std::map<std::int64_t, std::vector<SampleRow>> samples;  // by run, in time order per device
};

struct Read {
  MonitoringResult result;
  Db db;
};

Read read(FakeSource& source, const JobWindow& job, MonitoringOptions options = {}) {
  gpuscope::testing::TempDir tmp;
  const std::filesystem::path out = tmp.file("job.db");
  Read r;
  {
    RunTarget target(out, false);
    r.result = read_job(source, job, options, target);
    target.finish();
  }
  const auto reader = store::RunReader::open(out);
  r.db.runs = reader.runs();
  for (const auto& run : r.db.runs) r.db.devices[run.run_id] = reader.devices(run.run_id);
  auto cursor = reader.samples();
  store::RunSample s;
  while (cursor.next(s)) r.db.samples[s.run_id].push_back(s.row);
  return r;
}

double value(const SampleRow& row, Metric m) {
  const auto v = row.get(m);
  EXPECT_TRUE(v.has_value()) << info(m).name;
  return v.value_or(-1);
}

bool said(const MonitoringResult& r, const std::string& words) {
  for (const auto& n : r.notes) {
    if (n.find(words) != std::string::npos) return true;
  }
  return false;
}

std::string all_notes(const MonitoringResult& r) {
  std::string out;
  for (const auto& n : r.notes) out += n + "\n";
  return out;
}

const tsdb::Labels kServe = {{"gpu", "0"},
                             {"uuid", "GPU-aaa"},
                             {"hostname", "n1"},
                             {"instance", "n1:9400"},
                             {"slurm_job_id", "123"}};
const tsdb::Labels kDcgm = {{"gpu", "0"},
                            {"UUID", "GPU-aaa"},
                            {"device", "nvidia0"},
                            {"modelName", "NVIDIA H100 80GB HBM3"},
                            {"Hostname", "n1"},
                            {"pci_bus_id", "00000000:19:00.0"},
                            {"instance", "n1:9400"},
                            {"hpc_job", "123"}};
const tsdb::Labels kJobstats = {
    {"minor_number", "0"},           {"uuid", "GPU-aaa"}, {"name", "NVIDIA A100-SXM4-80GB"},
    {"instance", "n1.cluster:9445"}, {"jobid", "123"},    {"ordinal", "0"}};

// The labels that name a job or a pod are one table: what is asked and what is taken for the
// workload of the moment (a GPU's series with and without them are one series) cannot differ.
TEST(ExporterLabels, EveryJobAndPodLabelIsAWorkloadLabel) {
  for (const JobLabel& j : kSlurmJobLabels) {
    EXPECT_TRUE(is_workload_label(j.label)) << j.label;
    EXPECT_TRUE(is_workload_label("exported_" + std::string(j.label))) << j.label;
  }
  for (const PodLabels& p : kPodLabels) {
    EXPECT_TRUE(is_workload_label(p.pod)) << p.pod;
    EXPECT_TRUE(is_workload_label(p.pod_namespace)) << p.pod_namespace;
  }
  for (const char* other : {"userid", "jobId", "container", "container_name", "pod_uid"}) {
    EXPECT_TRUE(is_workload_label(other)) << other;
  }
  for (const char* identity : {"gpu", "UUID", "uuid", "Hostname", "instance", "GPU_I_ID", "job"}) {
    EXPECT_FALSE(is_workload_label(identity)) << identity;
  }
  EXPECT_FALSE(is_workload_label("exported_exported_pod"));
  // Asked in the table's order, each as it is and then exported_.
  JobWindow job;
  job.kind = "slurm";
  job.id = "12";
  const auto queries = label_queries(job);
  ASSERT_EQ(queries.size(), 2 * kSlurmJobLabels.size());
  EXPECT_EQ(queries[2].job_label, "hpc_job");
  EXPECT_EQ(queries[3].job_label, "exported_hpc_job");
  EXPECT_EQ(queries[3].matchers[0].op, "=~");
}

TEST(MonitoringFamilies, GpuscopeServeNamesAndUnits) {
  FakeSource src;
  src.add(with(kServe, "gpuscope_power_watts"), points(same(250)));
  src.add(with(kServe, "gpuscope_sm_active_ratio"), points(same(0.5)));
  src.add(with(kServe, "gpuscope_sm_clock_hertz"), points(same(1.5e9)));
  src.add(with(kServe, "gpuscope_energy_joules_total"),
          points({1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009}));
  src.add(with(kServe, "gpuscope_memory_used_bytes"), points(same(4e9)));
  const Read r = read(src, slurm_job());
  ASSERT_EQ(r.db.runs.size(), 1U);
  const auto& rows = r.db.samples.at(r.db.runs[0].run_id);
  ASSERT_EQ(rows.size(), 10U) << "one row per scrape, the metrics of a scrape merged";
  EXPECT_DOUBLE_EQ(value(rows[0], Metric::PowerW), 250);
  EXPECT_DOUBLE_EQ(value(rows[0], Metric::SmActivePct), 50);
  EXPECT_DOUBLE_EQ(value(rows[0], Metric::SmClockMhz), 1500);
  EXPECT_DOUBLE_EQ(value(rows[0], Metric::EnergyMj), 1e6);
  EXPECT_DOUBLE_EQ(value(rows[0], Metric::MemoryUsedBytes), 4e9);
  EXPECT_EQ(rows[3].wall_ns, (kT0 + 3 * kScrape) * 1'000'000);
  EXPECT_EQ(r.result.family, "gpuscope serve");
  EXPECT_DOUBLE_EQ(r.result.resolution_s, 15);
  EXPECT_FALSE(r.result.summarised);
  const auto& run = r.db.runs[0];
  EXPECT_EQ(run.info.host, "n1");
  EXPECT_EQ(run.info.slurm.job_id, "123");
  EXPECT_EQ(run.info.sampling_interval_ns, 15'000'000'000);
  EXPECT_EQ(run.info.origin,
            "VictoriaMetrics at http://vm.test:8428, gpuscope serve's series, 15 s scrape");
  EXPECT_EQ(run.end.status, RunStatus::Finished);
  EXPECT_EQ(r.db.devices.at(run.run_id).at(0).uuid, "GPU-aaa");
  ASSERT_EQ(src.raw_asked.size(), 2U) << "the interval probe, then the job's series at once";
  EXPECT_EQ(src.raw_asked[1],
            "{__name__=~\"" + names_regex(Family::Gpuscope) + "\",uuid=~\"GPU-aaa\"}")
      << "the label found the GPUs; their samples are read by UUID over the job's window";
}

TEST(MonitoringFamilies, TheJobsWindowNotTheLabelsBoundsTheSamples) {
  // The exporter saw the job's process a scrape late and lost it a scrape late: the samples
  // before the label came (unlabelled) are the job's too, those after its end are not.
  FakeSource src;
  tsdb::Labels bare = kServe;
  bare.erase("slurm_job_id");
  src.add(with(bare, "gpuscope_power_watts"), points(same(100, 1), kT0));
  src.add(with(kServe, "gpuscope_power_watts"), points(same(300, 10), kT0 + kScrape));
  const Read r = read(src, slurm_job());  // the window: kT0 .. kT0 + 9 scrapes
  const auto& rows = r.db.samples.begin()->second;
  ASSERT_EQ(rows.size(), 10U) << "the unlabelled first scrape in, the one after the end out";
  EXPECT_DOUBLE_EQ(value(rows[0], Metric::PowerW), 100);
  EXPECT_DOUBLE_EQ(value(rows[9], Metric::PowerW), 300);
}

TEST(MonitoringFamilies, GpuscopeNamesAreThoseServeExports) {
  // Every catalog metric serve exports (exporter/metric_names) reads back to the same metric with
  // the inverse factor.
  for (const auto& m : stored_metrics()) {
    const auto exported = exporter::exported_metric(m.id, exporter::Naming::Gpuscope);
    ASSERT_TRUE(exported) << m.name;
    const ExportedName* name = exported_name({{"__name__", exported->name}});
    ASSERT_NE(name, nullptr) << exported->name << " is not read";
    EXPECT_EQ(name->metric, m.id) << exported->name;
    EXPECT_NEAR(name->scale * exported->scale, 1.0, 1e-12) << exported->name;
    EXPECT_EQ(name->counter, exported->type == "counter") << exported->name;
  }
  for (const auto& m : stored_metrics()) {
    const auto dcgm = exporter::exported_metric(m.id, exporter::Naming::Dcgm);
    if (!dcgm) continue;
    const ExportedName* name = exported_name({{"__name__", dcgm->name}});
    ASSERT_NE(name, nullptr) << dcgm->name << " (serve --naming dcgm) is not read";
    EXPECT_EQ(name->metric, m.id) << dcgm->name;
    EXPECT_NEAR(name->scale * dcgm->scale, 1.0, 1e-12) << dcgm->name;
  }
}

TEST(MonitoringFamilies, DcgmExporterNamesUnitsAndLabels) {
  FakeSource src;
  src.add(with(kDcgm, "DCGM_FI_DEV_POWER_USAGE"), points(same(300)));
  src.add(with(kDcgm, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"),
          points({5e6, 5.1e6, 5.2e6, 5.3e6, 5.4e6, 5.5e6, 5.6e6, 5.7e6, 5.8e6, 5.9e6}));
  src.add(with(kDcgm, "DCGM_FI_DEV_FB_USED"), points(same(1024)));
  src.add(with(kDcgm, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"), points(same(0.25)));
  src.add(with(kDcgm, "DCGM_FI_DEV_SM_CLOCK"), points(same(1980)));
  src.add(with(kDcgm, "DCGM_FI_DEV_GPU_UTIL"), points(same(87)));
  src.add(with(kDcgm, "DCGM_FI_DEV_GPU_TEMP"), points(same(61)));
  const Read r = read(src, slurm_job());
  const auto& rows = r.db.samples.begin()->second;
  ASSERT_EQ(rows.size(), 10U);
  EXPECT_DOUBLE_EQ(value(rows[0], Metric::PowerW), 300);
  EXPECT_DOUBLE_EQ(value(rows[1], Metric::EnergyMj), 5.1e6) << "mJ, the catalog's unit";
  EXPECT_DOUBLE_EQ(value(rows[0], Metric::MemoryUsedBytes), 1024.0 * 1024 * 1024) << "MiB";
  EXPECT_DOUBLE_EQ(value(rows[0], Metric::TensorActivePct), 25);
  EXPECT_DOUBLE_EQ(value(rows[0], Metric::SmClockMhz), 1980);
  EXPECT_DOUBLE_EQ(value(rows[0], Metric::GpuUtilPct), 87);
  EXPECT_DOUBLE_EQ(value(rows[0], Metric::TemperatureC), 61);
  const auto& d = r.db.devices.begin()->second.at(0);
  EXPECT_EQ(d.uuid, "GPU-aaa");
  EXPECT_EQ(d.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d.pci_bus_id, "00000000:19:00.0");
  EXPECT_EQ(d.saturation_source, "dcgm");
  EXPECT_EQ(r.result.family, "dcgm-exporter");
  EXPECT_NE(r.result.matched_by.find("hpc_job"), std::string::npos) << r.result.matched_by;
}

TEST(MonitoringFamilies, DcgmExporter49NamesInNewUnits) {
  FakeSource src;
  src.add(with(kDcgm, "DCGM_FI_DEV_BOARD_POWER_WATTS"), points(same(310)));
  src.add(with(kDcgm, "DCGM_FI_DEV_GPU_ENERGY_JOULES_TOTAL"), points(same(7000)));
  src.add(with(kDcgm, "DCGM_FI_DEV_SM_CLOCK_HERTZ"), points(same(1.98e9)));
  src.add(with(kDcgm, "DCGM_FI_DEV_GPU_UTIL_RATIO"), points(same(0.75)));
  src.add(with(kDcgm, "DCGM_FI_PROF_SM_UTIL_RATIO"), points(same(0.6)));
  src.add(with(kDcgm, "DCGM_FI_DEV_GPU_TEMP_CELSIUS"), points(same(55)));
  const Read r = read(src, slurm_job());
  const auto& row = r.db.samples.begin()->second.at(0);
  EXPECT_DOUBLE_EQ(value(row, Metric::PowerW), 310);
  EXPECT_DOUBLE_EQ(value(row, Metric::EnergyMj), 7e6) << "J to mJ";
  EXPECT_DOUBLE_EQ(value(row, Metric::SmClockMhz), 1980) << "Hz to MHz";
  EXPECT_DOUBLE_EQ(value(row, Metric::GpuUtilPct), 75) << "ratio to percent";
  EXPECT_DOUBLE_EQ(value(row, Metric::SmActivePct), 60);
  EXPECT_DOUBLE_EQ(value(row, Metric::TemperatureC), 55);
}

TEST(MonitoringFamilies, A46RatioNameHoldingPercentIsReadAsPercent) {
  FakeSource src;
  src.add(with(kDcgm, "DCGM_FI_DEV_GPU_UTIL_RATIO"), points(same(87)));
  const Read r = read(src, slurm_job());
  EXPECT_DOUBLE_EQ(value(r.db.samples.begin()->second.at(0), Metric::GpuUtilPct), 87);
  EXPECT_TRUE(said(r.result, "read as percent")) << all_notes(r.result);
}

TEST(MonitoringFamilies, JobstatsNamesAndUnits) {
  FakeSource src;
  src.add(with(kJobstats, "nvidia_gpu_power_usage_milliwatts"), points(same(250000)));
  src.add(with(kJobstats, "nvidia_gpu_duty_cycle"), points(same(93)));
  src.add(with(kJobstats, "nvidia_gpu_sm_util_percent"), points(same(0.5)));
  src.add(with(kJobstats, "nvidia_gpu_memory_used_bytes"), points(same(2e9)));
  src.add(with(kJobstats, "nvidia_gpu_memory_total_bytes"), points(same(8e10)));
  auto sm = with(kJobstats, "nvidia_gpu_clock");
  sm["type"] = "sm";
  src.add(sm, points(same(1410)));
  auto mem = with(kJobstats, "nvidia_gpu_clock");
  mem["type"] = "mem";
  src.add(mem, points(same(1593)));
  const Read r = read(src, slurm_job());
  ASSERT_EQ(r.db.runs.size(), 1U);
  EXPECT_EQ(r.db.runs[0].info.host, "n1") << "instance n1.cluster:9445 is node n1";
  const auto& row = r.db.samples.begin()->second.at(0);
  EXPECT_DOUBLE_EQ(value(row, Metric::PowerW), 250) << "mW to W";
  EXPECT_DOUBLE_EQ(value(row, Metric::GpuUtilPct), 93);
  EXPECT_DOUBLE_EQ(value(row, Metric::SmActivePct), 50) << "*_percent holds a 0-1 ratio";
  EXPECT_DOUBLE_EQ(value(row, Metric::MemoryUsedBytes), 2e9);
  EXPECT_DOUBLE_EQ(value(row, Metric::SmClockMhz), 1410);
  EXPECT_DOUBLE_EQ(value(row, Metric::MemClockMhz), 1593);
  EXPECT_FALSE(row.get(Metric::EnergyMj));
  const auto& d = r.db.devices.begin()->second.at(0);
  EXPECT_EQ(d.memory_total_bytes, 80'000'000'000ULL);
  EXPECT_EQ(d.name, "NVIDIA A100-SXM4-80GB");
  EXPECT_TRUE(said(r.result, "no energy counter was exported on n1")) << all_notes(r.result);
}

TEST(MonitoringConventions, ExportedLabelOfDcgmExporter) {
  FakeSource src;
  auto labels = kDcgm;
  labels.erase("hpc_job");
  labels["exported_hpc_job"] = "123";
  src.add(with(labels, "DCGM_FI_DEV_POWER_USAGE"), points(same(100)));
  const Read r = read(src, slurm_job());
  EXPECT_EQ(r.result.gpus, 1U);
  EXPECT_NE(r.result.matched_by.find("exported_hpc_job"), std::string::npos) << r.result.matched_by;
}

TEST(MonitoringConventions, TriedInOrderGpuscopeFirst) {
  FakeSource src;
  src.add(with(kServe, "gpuscope_power_watts"), points(same(250)));
  src.add(with(kDcgm, "DCGM_FI_DEV_POWER_USAGE"), points(same(999)));
  const Read r = read(src, slurm_job());
  EXPECT_DOUBLE_EQ(value(r.db.samples.begin()->second.at(0), Metric::PowerW), 250)
      << "one family per GPU: gpuscope serve before dcgm-exporter";
  EXPECT_EQ(r.result.family, "gpuscope serve");
  EXPECT_TRUE(said(r.result, "also exported by dcgm-exporter")) << all_notes(r.result);
  ASSERT_GE(src.asked.size(), 3U);
  EXPECT_NE(src.asked[0].find("slurm_job_id=\"123\""), std::string::npos) << src.asked[0];
  EXPECT_NE(src.asked[1].find("exported_slurm_job_id=\"123\""), std::string::npos) << src.asked[1];
  EXPECT_NE(src.asked[2].find("hpc_job=~"), std::string::npos) << src.asked[2];
}

TEST(MonitoringConventions, PodLabels) {
  FakeSource src;
  tsdb::Labels labels = {{"gpu", "1"},
                         {"uuid", "GPU-bbb"},
                         {"hostname", "k8s-node-3"},
                         {"pod", "trainer-0"},
                         {"namespace", "ml"}};
  src.add(with(labels, "gpuscope_power_watts"), points(same(200)));
  JobWindow job;
  job.kind = "pod";
  job.id = "ml/trainer-0";
  job.window = {kT0, kT0 + 9 * kScrape};
  const Read r = read(src, job);
  ASSERT_EQ(r.db.runs.size(), 1U);
  EXPECT_EQ(r.db.runs[0].info.host, "k8s-node-3");
  EXPECT_EQ(r.db.runs[0].info.ranks.pod_name, "trainer-0");
  EXPECT_EQ(r.db.runs[0].info.ranks.pod_namespace, "ml");
  EXPECT_EQ(r.db.devices.begin()->second.at(0).index, 1U);
}

TEST(MonitoringConventions, JobstatsJobIdValueKeepsOnlyTheJobsTimes) {
  FakeSource src;
  auto labels = kJobstats;
  labels.erase("jobid");  // an exporter older than the jobid label
  // The GPU ran job 99 for the first 4 scrapes, then job 123.
  src.add(with(labels, "nvidia_gpu_jobId"), points({99, 99, 99, 99, 123, 123, 123, 123, 123, 123}));
  src.add(with(labels, "nvidia_gpu_power_usage_milliwatts"), points(same(100000)));
  const Read r = read(src, slurm_job());
  ASSERT_EQ(r.db.runs.size(), 1U);
  const auto& rows = r.db.samples.begin()->second;
  ASSERT_EQ(rows.size(), 6U) << "only the scrapes when nvidia_gpu_jobId was 123";
  EXPECT_EQ(rows.front().wall_ns, (kT0 + 4 * kScrape) * 1'000'000);
  EXPECT_NE(r.result.matched_by.find("nvidia_gpu_jobId"), std::string::npos) << r.result.matched_by;
}

TEST(MonitoringConventions, ExclusiveNodesFallBackToEveryGpuOfTheNodes) {
  FakeSource src;
  auto labels = kDcgm;
  labels.erase("hpc_job");  // no job label at all
  src.add(with(labels, "DCGM_FI_DEV_POWER_USAGE"), points(same(400)));
  auto other = labels;
  other["UUID"] = "GPU-other";
  other["Hostname"] = "n9";
  other["instance"] = "n9:9400";
  src.add(with(other, "DCGM_FI_DEV_POWER_USAGE"), points(same(1)));
  JobWindow job = slurm_job();
  EXPECT_THROW(read(src, job), Error) << "not exclusive: no fallback";
  job.exclusive = true;
  const Read r = read(src, job);
  EXPECT_EQ(r.result.gpus, 1U) << "only the job's node";
  EXPECT_DOUBLE_EQ(value(r.db.samples.begin()->second.at(0), Metric::PowerW), 400);
  EXPECT_TRUE(said(r.result, "every GPU of them in the window is taken as the job's"))
      << all_notes(r.result);
}

TEST(MonitoringConventions, HostsKindReadsEveryGpuOfTheHosts) {
  FakeSource src;
  auto labels = kJobstats;
  labels.erase("jobid");
  src.add(with(labels, "nvidia_gpu_power_usage_milliwatts"), points(same(50000)));
  labels["uuid"] = "GPU-second";
  labels["minor_number"] = "1";
  src.add(with(labels, "nvidia_gpu_power_usage_milliwatts"), points(same(60000)));
  JobWindow job;
  job.kind = "hosts";
  job.nodes = {"N1"};
  job.window = {kT0, kT0 + 9 * kScrape};
  const Read r = read(src, job);
  EXPECT_EQ(r.result.gpus, 2U);
  EXPECT_EQ(r.db.devices.begin()->second.size(), 2U);
}

TEST(MonitoringAwkward, CounterResetPassesThroughAndIsSaid) {
  FakeSource src;
  src.add(with(kServe, "gpuscope_energy_joules_total"),
          points({100, 110, 120, 130, 5, 15, 25, 35, 45, 55}));
  const Read r = read(src, slurm_job());
  const auto& rows = r.db.samples.begin()->second;
  EXPECT_DOUBLE_EQ(value(rows[4], Metric::EnergyMj), 5000) << "passed through, not corrected";
  EXPECT_TRUE(said(r.result, "counter of GPU GPU-aaa on n1 went back")) << all_notes(r.result);
}

TEST(MonitoringAwkward, GapsStayGaps) {
  FakeSource src;
  auto p = points(same(200));
  p.erase(p.begin() + 3, p.begin() + 7);  // four scrapes missing
  src.add(with(kServe, "gpuscope_power_watts"), p);
  const Read r = read(src, slurm_job());
  EXPECT_EQ(r.db.samples.begin()->second.size(), 6U) << "nothing interpolated";
  EXPECT_DOUBLE_EQ(r.result.resolution_s, 15) << "the median spacing, not the gap";
  EXPECT_TRUE(said(r.result, "1 gap")) << all_notes(r.result);
}

TEST(MonitoringAwkward, ExporterRestartJoinsThePieces) {
  FakeSource src;
  auto before = kServe, after = kServe;
  after["instance"] = "n1:9401";
  src.add(with(before, "gpuscope_power_watts"), points(same(100, 5)));
  src.add(with(after, "gpuscope_power_watts"), points(same(200, 5), kT0 + 5 * kScrape));
  const Read r = read(src, slurm_job());
  const auto& rows = r.db.samples.begin()->second;
  ASSERT_EQ(rows.size(), 10U);
  EXPECT_EQ(r.db.devices.begin()->second.size(), 1U) << "one GPU, by UUID";
  EXPECT_DOUBLE_EQ(value(rows[4], Metric::PowerW), 100);
  EXPECT_DOUBLE_EQ(value(rows[5], Metric::PowerW), 200);
  EXPECT_TRUE(said(r.result, "exporter restarted on n1")) << all_notes(r.result);
  EXPECT_TRUE(said(r.result, "instance")) << all_notes(r.result);
}

TEST(MonitoringAwkward, AMissingNodeIsNamedAndTheRestRead) {
  FakeSource src;
  src.add(with(kServe, "gpuscope_power_watts"), points(same(200)));
  const Read r = read(src, slurm_job({"n1", "n2"}));
  EXPECT_EQ(r.db.runs.size(), 1U);
  EXPECT_EQ(r.result.nodes_missing, std::vector<std::string>{"n2"});
  EXPECT_TRUE(said(r.result, "no exporter series of n2")) << all_notes(r.result);
}

TEST(MonitoringAwkward, ASharedGpuKeepsOnlyThisJobsSamples) {
  FakeSource src;
  auto theirs = kServe;
  theirs["slurm_job_id"] = "124";
  src.add(with(kServe, "gpuscope_power_watts"), points(same(300, 5)));
  src.add(with(theirs, "gpuscope_power_watts"), points(same(50, 5), kT0 + 5 * kScrape));
  const Read r = read(src, slurm_job());
  const auto& rows = r.db.samples.begin()->second;
  ASSERT_EQ(rows.size(), 5U);
  for (const auto& row : rows) EXPECT_DOUBLE_EQ(value(row, Metric::PowerW), 300);
  EXPECT_TRUE(said(r.result, "was shared")) << all_notes(r.result);
  EXPECT_TRUE(said(r.result, "124")) << all_notes(r.result);
}

TEST(MonitoringAwkward, ALabelListingTwoJobsIsSaid) {
  FakeSource src;
  auto labels = kDcgm;
  labels["hpc_job"] = "122,123";
  src.add(with(labels, "DCGM_FI_DEV_POWER_USAGE"), points(same(100)));
  const Read r = read(src, slurm_job());
  EXPECT_EQ(r.result.gpus, 1U);
  EXPECT_TRUE(said(r.result, "labelled with several jobs")) << all_notes(r.result);
}

TEST(MonitoringAwkward, NoSeriesAtAllSaysWhatToCheck) {
  FakeSource src;
  src.add(with(kServe, "gpuscope_power_watts"), points(same(1), kT0 - 1'000'000));  // before
  try {
    read(src, slurm_job({"n1", "n2"}));
    FAIL() << "no GPU must be an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("job 123 ran on n1,n2 but no exporter series names it"), std::string::npos)
        << what;
    EXPECT_NE(what.find("hpc_job"), std::string::npos) << what;
  }
}

TEST(MonitoringAwkward, AWindowOfYearsIsRefused) {
  FakeSource src;
  JobWindow job = slurm_job();
  job.window.end_ms = job.window.start_ms + 3LL * 365 * 86'400'000;
  EXPECT_THROW(read(src, job), Error);
  EXPECT_TRUE(src.asked.empty()) << "refused before asking the server";
}

// A server that answers a query for {slurm_job_id!=""} with a series lacking the label: its
// answer is not the API's. Before the fix, std::map::at threw std::out_of_range, an "internal
// error ... please report it".
TEST(MonitoringAwkward, ASeriesWithoutTheAskedJobLabelIsAnUnknownShape) {
  struct Odd : FakeSource {
    std::vector<tsdb::Labels> series(const std::string& sel, const tsdb::Window& w) override {
      auto out = FakeSource::series(sel, w);
      if (sel.find(R"(slurm_job_id!="")") != std::string::npos) {
        auto lacking = with(kServe, "gpuscope_power_watts");
        lacking.erase("slurm_job_id");
        out.push_back(lacking);
      }
      return out;
    }
  } src;
  src.add(with(kServe, "gpuscope_power_watts"), points(same(300, 5)));
  try {
    read(src, slurm_job());
    ADD_FAILURE() << "read";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("answered /api/v1/series in an unknown shape"), std::string::npos) << m;
    EXPECT_NE(m.find(R"(has no slurm_job_id label)"), std::string::npos) << m;
  }
}

// --summary and --keep-summary summarise however few samples there are: the note said "about 9
// samples would be read, more than 20000000".
TEST(MonitoringSummary, ASummaryAskedForIsNotSaidToPassTheLimit) {
  FakeSource src;
  src.add(with(kServe, "gpuscope_power_watts"), points(same(300)));
  MonitoringOptions options;
  options.force_summary = true;
  const Read r = read(src, slurm_job(), options);
  EXPECT_TRUE(r.result.summarised);
  EXPECT_TRUE(said(r.result,
                   "the timeline is summarised: as asked (about 9 samples would have "
                   "been read)"))
      << all_notes(r.result);
  EXPECT_FALSE(said(r.result, "more than")) << all_notes(r.result);
}

TEST(MonitoringSummary, BucketsFromTheServersSummaries) {
  FakeSource src;
  std::vector<double> power, energy;
  for (int i = 0; i < 40; ++i) {
    power.push_back(i < 20 ? 100 : 300);
    energy.push_back(1000.0 + i);
  }
  src.add(with(kServe, "gpuscope_power_watts"), points(power));
  src.add(with(kServe, "gpuscope_energy_joules_total"), points(energy));
  JobWindow job = slurm_job();
  job.window.end_ms = kT0 + 40 * kScrape;  // 600 s
  MonitoringOptions options;
  options.summary_buckets = 4;
  options.max_raw_points = 10;  // 80 samples would be read: summarised
  const Read r = read(src, job, options);
  EXPECT_TRUE(r.result.summarised);
  EXPECT_DOUBLE_EQ(r.result.resolution_s, 150);
  const auto& rows = r.db.samples.begin()->second;
  ASSERT_EQ(rows.size(), 4U) << "one row per bucket";
  EXPECT_DOUBLE_EQ(value(rows[0], Metric::PowerW), 100);
  EXPECT_DOUBLE_EQ(value(rows[3], Metric::PowerW), 300);
  EXPECT_DOUBLE_EQ(value(rows[0], Metric::EnergyMj), 1010e3) << "the counter at the bucket end";
  EXPECT_EQ(rows[0].wall_ns, (kT0 + 150'000) * 1'000'000);
  EXPECT_NE(r.db.runs[0].info.origin->find("summarised"), std::string::npos);
  EXPECT_TRUE(said(r.result, "the timeline is summarised")) << all_notes(r.result);
  bool avg = false, last = false;
  for (const auto& q : src.asked) {
    avg = avg || q == R"(avg_over_time({__name__="gpuscope_power_watts",uuid=~"GPU-aaa"}[150s]))";
    last =
        last ||
        q == R"(last_over_time({__name__="gpuscope_energy_joules_total",uuid=~"GPU-aaa"}[150s]))";
  }
  EXPECT_TRUE(avg && last) << "the server summarises; no sample pulled";
  ASSERT_EQ(src.raw_asked.size(), 1U) << "only the probe of the scrape interval pulls samples";
  EXPECT_EQ(src.raw_asked[0],
            R"({__name__="gpuscope_power_watts",slurm_job_id="123",uuid="GPU-aaa"})");
}

TEST(MonitoringSelectors, ValuesAreEscaped) {
  EXPECT_EQ(tsdb::quote("a\"b\\c\nd"), R"("a\"b\\c\nd")");
  EXPECT_EQ(tsdb::regex_quote("123+4.5"), R"(123\+4\.5)");
  EXPECT_EQ(tsdb::selector({{"__name__", "=", "x"}, {"hpc_job", "=~", tsdb::regex_quote("1+2")}}),
            R"({__name__="x",hpc_job=~"1\\+2"})");
  FakeSource src;
  JobWindow job = slurm_job();
  job.id = "12\"3\\";
  EXPECT_THROW(read(src, job), Error);
  ASSERT_FALSE(src.asked.empty());
  // Every selector asked parses back (the fake's parser throws on malformed ones) and carries
  // the id escaped.
  EXPECT_NE(src.asked[0].find(R"(slurm_job_id="12\"3\\")"), std::string::npos) << src.asked[0];
  const auto m = testing::parse_selector(src.asked[0]);
  EXPECT_EQ(m.back().value, "12\"3\\");
}

TEST(MonitoringSelectors, NodeNamesMatchTheirLabels) {
  EXPECT_EQ(short_host("n1.cluster.example:9400"), "n1");
  EXPECT_EQ(short_host("[fe80::1]:9400"), "fe80::1");
  EXPECT_EQ(short_host("10.0.0.5:9400"), "10.0.0.5");
  EXPECT_EQ(node_of({{"instance", "10.0.0.5:9400"}, {"nodename", "GPU07"}}, {"gpu07"}), "gpu07")
      << "a node label that names a job node wins over the first present";
  // NodeIndex: node_of for a site's nodes, the same answers.
  const std::vector<std::string> nodes = {"gpu07", "n1.cluster.example", "GPU08"};
  const NodeIndex index(nodes);
  for (const tsdb::Labels& labels :
       std::vector<tsdb::Labels>{{{"instance", "10.0.0.5:9400"}, {"nodename", "GPU07"}},
                                 {{"hostname", "n1"}},
                                 {{"Hostname", "gpu08.site:9400"}},
                                 {{"instance", "other:9400"}},
                                 {{"pod", "x"}}}) {
    EXPECT_EQ(index.node_of(labels), node_of(labels, nodes));
  }
  EXPECT_EQ(index.node_of({{"hostname", "n1"}}), "n1.cluster.example");
}

}  // namespace
}  // namespace gpuscope::ingest
