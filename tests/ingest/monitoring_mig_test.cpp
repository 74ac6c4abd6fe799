// ingest::read_job on a MIG node as dcgm-exporter exports it: each GPU instance's series carry
// the parent GPU's gpu and UUID labels plus GPU_I_ID and GPU_I_PROFILE, repeat the GPU's power,
// energy and temperature, and (in its default mode) there is no series of the GPU itself. Each
// instance of the job must become a MIG device of its own (row index 1000 + 100 × GPU + GPU
// instance id) with its activity and memory, and the GPU's power taken once for a GPU row,
// never added up over the instances; another job's instance of the same GPU stays out.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "core/mig.hpp"
#include "fake_source.hpp"
#include "ingest/exporter_families.hpp"
#include "ingest/job_series.hpp"
#include "ingest/monitoring.hpp"
#include "store/run_reader.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::ingest {
namespace {

using testing::FakeSource;
constexpr std::int64_t kT0 = 1'700'000'000'000;
constexpr std::int64_t kScrape = 15'000;
constexpr std::size_t kScrapes = 10;

std::vector<tsdb::Point> flat(double v) {
  std::vector<tsdb::Point> out;
  for (std::size_t i = 0; i < kScrapes; ++i) {
    out.push_back({kT0 + static_cast<std::int64_t>(i) * kScrape, v});
  }
  return out;
}

std::vector<tsdb::Point> rising(double from, double step) {
  auto out = flat(from);
  for (std::size_t i = 0; i < out.size(); ++i) out[i].value += step * static_cast<double>(i);
  return out;
}

JobWindow slurm_job() {
  JobWindow job;
  job.kind = "slurm";
  job.id = "123";
  job.window = {kT0, kT0 + 9 * kScrape};
  job.nodes = {"n1"};
  return job;
}

// dcgm-exporter's labels of GPU 0 (GPU-aaa, H100) instance `gi` with `profile`, on job `job`.
tsdb::Labels instance(unsigned gi, const std::string& profile, const std::string& job,
                      const std::string& name) {
  return {{"__name__", name},
          {"gpu", "0"},
          {"UUID", "GPU-aaa"},
          {"device", "nvidia0"},
          {"modelName", "NVIDIA H100 80GB HBM3"},
          {"pci_bus_id", "00000000:1A:00.0"},
          {"GPU_I_PROFILE", profile},
          {"GPU_I_ID", std::to_string(gi)},
          {"Hostname", "n1"},
          {"instance", "n1:9400"},
          {"hpc_job", job}};
}

// GPU 0 in MIG mode with instances 7 and 8 (1g.10gb) of job 123 and 9 (3g.40gb) of job 999; every
// instance series repeats the GPU's 300 W, its energy counter and 50 °C. GPU 1 (GPU-bbb) is a
// whole GPU of job 123 at 200 W.
void add_mig_node(FakeSource& src, bool own_gpu_series = false) {
  const std::vector<std::tuple<unsigned, std::string, std::string, double, double>> instances = {
      {7, "1g.10gb", "123", 0.2, 1000},
      {8, "1g.10gb", "123", 0.4, 3000},
      {9, "3g.40gb", "999", 0.9, 30000}};
  for (const auto& [gi, profile, job, sm, fb_mib] : instances) {
    src.add(instance(gi, profile, job, "DCGM_FI_PROF_SM_ACTIVE"), flat(sm));
    src.add(instance(gi, profile, job, "DCGM_FI_DEV_FB_USED"), flat(fb_mib));
    src.add(instance(gi, profile, job, "DCGM_FI_DEV_FB_TOTAL"), flat(9728));
    src.add(instance(gi, profile, job, "DCGM_FI_DEV_POWER_USAGE"), flat(300));
    src.add(instance(gi, profile, job, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"), rising(5e6, 4.5e6));
    src.add(instance(gi, profile, job, "DCGM_FI_DEV_GPU_TEMP"), flat(50));
    src.add(instance(gi, profile, job, "DCGM_FI_DEV_GPU_UTIL"), flat(0));
  }
  tsdb::Labels whole = {{"gpu", "1"},          {"UUID", "GPU-bbb"},
                        {"device", "nvidia1"}, {"modelName", "NVIDIA H100 80GB HBM3"},
                        {"Hostname", "n1"},    {"instance", "n1:9400"},
                        {"hpc_job", "123"},    {"__name__", "DCGM_FI_DEV_POWER_USAGE"}};
  src.add(whole, flat(200));
  whole["__name__"] = "DCGM_FI_PROF_SM_ACTIVE";
  src.add(whole, flat(0.5));
  if (own_gpu_series) {  // dcgm-exporter -d g,i: the GPU's own series beside its instances'
    tsdb::Labels gpu0 = instance(0, "", "123", "DCGM_FI_DEV_POWER_USAGE");
    gpu0.erase("GPU_I_ID");
    gpu0.erase("GPU_I_PROFILE");
    src.add(gpu0, flat(300));
    gpu0["__name__"] = "DCGM_FI_DEV_GPU_TEMP";
    src.add(gpu0, flat(50));
    gpu0["__name__"] = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION";
    src.add(gpu0, rising(5e6, 4.5e6));
  }
}

struct Read {
  MonitoringResult result;
  std::vector<DeviceDescription> devices;
  std::map<unsigned, std::vector<SampleRow>> rows;  // by device
};

Read read(FakeSource& source, MonitoringOptions options = {}) {
  gpuscope::testing::TempDir tmp;
  const std::filesystem::path out = tmp.file("job.db");
  Read r;
  {
    RunTarget target(out, false);
    r.result = read_job(source, slurm_job(), options, target);
    target.finish();
  }
  const auto reader = store::RunReader::open(out);
  const auto runs = reader.runs();
  EXPECT_EQ(runs.size(), 1U);
  r.devices = reader.devices(runs.at(0).run_id);
  auto cursor = reader.samples();
  store::RunSample s;
  while (cursor.next(s)) r.rows[s.row.device_index].push_back(s.row);
  return r;
}

bool said(const MonitoringResult& r, const std::string& words) {
  for (const auto& n : r.notes) {
    if (n.find(words) != std::string::npos) return true;
  }
  return false;
}

const DeviceDescription* device(const Read& r, unsigned index) {
  for (const auto& d : r.devices) {
    if (d.index == index) return &d;
  }
  return nullptr;
}

// Every row of `rows` has `m` at `v`.
void expect_all(const std::vector<SampleRow>& rows, Metric m, double v) {
  ASSERT_FALSE(rows.empty());
  for (const auto& row : rows) EXPECT_DOUBLE_EQ(row.get(m).value_or(-1), v) << info(m).name;
}

void expect_none(const std::vector<SampleRow>& rows, Metric m) {
  for (const auto& row : rows) EXPECT_FALSE(row.get(m).has_value()) << info(m).name;
}

TEST(MonitoringMig, DcgmExporterLabelsOfAnInstance) {
  const auto mig = mig_instance(instance(7, "1g.10gb", "123", "DCGM_FI_PROF_SM_ACTIVE"));
  ASSERT_TRUE(mig);
  EXPECT_EQ(mig->gpu_instance_id, 7U);
  EXPECT_EQ(mig->profile, "1g.10gb");
  EXPECT_FALSE(mig_instance({{"GPU_I_ID", ""}})) << "jobstats' naming sends an empty GPU_I_ID";
  EXPECT_FALSE(mig_instance({{"gpu", "0"}}));
  EXPECT_EQ(gpu_key(instance(7, "1g.10gb", "123", "x"), {"n1"}), "GPU-aaa GI 7");
  EXPECT_EQ(gpu_key({{"UUID", "GPU-aaa"}}, {"n1"}), "GPU-aaa");
}

void expect_mig_run(const Read& r) {
  std::vector<unsigned> indices;
  for (const auto& d : r.devices) indices.push_back(d.index);
  EXPECT_EQ(indices, (std::vector<unsigned>{0, 1, mig_device_index(0, 7), mig_device_index(0, 8)}))
      << "job 999's instance 9 of the same GPU is not the job's";

  const DeviceDescription* gpu = device(r, 0);
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->uuid, "GPU-aaa");
  EXPECT_EQ(gpu->name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpu->mig_enabled, true);
  EXPECT_FALSE(gpu->mig);
  EXPECT_FALSE(device(r, 1)->mig_enabled.has_value()) << "GPU 1 did not say";

  const DeviceDescription* gi7 = device(r, 1007);
  ASSERT_NE(gi7, nullptr);
  ASSERT_TRUE(gi7->mig);
  EXPECT_EQ(gi7->mig->parent_index, 0U);
  EXPECT_EQ(gi7->mig->gpu_instance_id, 7U);
  EXPECT_EQ(gi7->mig->profile, "1g.10gb");
  EXPECT_EQ(gi7->mig->gpu_slices, 1U);
  EXPECT_FALSE(gi7->uuid) << "GPU-aaa is its GPU's UUID, not its own";
  EXPECT_EQ(gi7->name, "NVIDIA H100 80GB HBM3 MIG 1g.10gb");
  EXPECT_EQ(gi7->memory_total_bytes, 9728ULL << 20) << "its own memory";
  EXPECT_EQ(gi7->saturation_source, "dcgm");

  // The GPU's power, energy and temperature once, on the GPU's row: 300 W, not 600.
  const auto& gpu_rows = r.rows.at(0);
  expect_all(gpu_rows, Metric::PowerW, 300);
  expect_all(gpu_rows, Metric::TemperatureC, 50);
  EXPECT_TRUE(gpu_rows.front().get(Metric::EnergyMj).has_value());
  expect_none(gpu_rows, Metric::SmActivePct);
  expect_none(gpu_rows, Metric::GpuUtilPct);
  // Each instance its own activity and memory, none of the GPU's metrics.
  for (const auto& [index, sm, mib] : {std::tuple{1007U, 20.0, 1000.0}, {1008U, 40.0, 3000.0}}) {
    const auto& rows = r.rows.at(index);
    EXPECT_EQ(rows.size(), kScrapes);
    expect_all(rows, Metric::SmActivePct, sm);
    expect_all(rows, Metric::MemoryUsedBytes, mib * 1048576);
    for (Metric m : {Metric::PowerW, Metric::EnergyMj, Metric::TemperatureC, Metric::GpuUtilPct}) {
      expect_none(rows, m);
    }
  }
  // The node's power at any scrape: GPU 0 once and GPU 1.
  double watts = 0;
  for (const auto& [index, rows] : r.rows) watts += rows.front().get(Metric::PowerW).value_or(0);
  EXPECT_DOUBLE_EQ(watts, 500);
}

TEST(MonitoringMig, EachInstanceIsADeviceAndTheGpusPowerIsTakenOnce) {
  FakeSource src;
  add_mig_node(src);
  const Read r = read(src);
  expect_mig_run(r);
  EXPECT_TRUE(said(r.result, "never added up")) << "the GPU row's origin is said";
  EXPECT_TRUE(said(r.result, "GPU instance 7's series"));
  EXPECT_TRUE(said(r.result, "utilization are not measured"));
  EXPECT_FALSE(said(r.result, "was shared"))
      << "another job on another instance of the GPU shares nothing with this one";
  EXPECT_EQ(r.result.runs, 1U);
}

TEST(MonitoringMig, SummariesKeepTheSameDevices) {
  FakeSource src;
  add_mig_node(src);
  MonitoringOptions options;
  options.force_summary = true;
  options.summary_buckets = 3;
  const Read r = read(src, options);
  EXPECT_TRUE(r.result.summarised);
  std::vector<unsigned> indices;
  for (const auto& d : r.devices) indices.push_back(d.index);
  EXPECT_EQ(indices, (std::vector<unsigned>{0, 1, 1007, 1008}));
  expect_all(r.rows.at(0), Metric::PowerW, 300);
  expect_all(r.rows.at(1008), Metric::SmActivePct, 40);
  expect_none(r.rows.at(1008), Metric::PowerW);
}

TEST(MonitoringMig, TheGpusOwnSeriesAreItsRowWhenExported) {
  FakeSource src;
  add_mig_node(src, true);
  const Read r = read(src);
  expect_mig_run(r);
  EXPECT_FALSE(said(r.result, "never added up")) << "no GPU row had to be made from an instance";
}

}  // namespace
}  // namespace gpuscope::ingest
