// ingest::read_job on a MIG node as dcgm-exporter exports it: each GPU instance's series carry
// the parent GPU's gpu and UUID labels plus GPU_I_ID and GPU_I_PROFILE, repeat the GPU's power,
// energy and temperature, and (in its default mode) there is no series of the GPU itself. Each
// instance of the job must become a MIG device of its own (row index 1000 + 100 × GPU + GPU
// instance id) with its activity and memory, and the GPU's power taken once for a GPU row,
// never added up over the instances; another job's instance of the same GPU stays out.
// gpuscope serve labels an instance under its GPU's gpu and uuid with gpu_instance_id,
// mig_profile and mig_uuid (its --naming jobstats: GPU_I_ID only), and exports the GPU's power,
// energy and temperature once, on the GPU's own series, which carry no job label: those are read
// by the GPU's UUID for the job's instances.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "core/mig.hpp"
#include "fake_source.hpp"
#include "ingest/monitoring/exporter_families.hpp"
#include "ingest/monitoring/exporter_labels.hpp"
#include "ingest/monitoring/job_series.hpp"
#include "ingest/monitoring/monitoring.hpp"
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

Read read(FakeSource& source, MonitoringOptions options = {}, JobWindow job = slurm_job()) {
  gpuscope::testing::TempDir tmp;
  const std::filesystem::path out = tmp.file("job.db");
  Read r;
  {
    RunTarget target(out, false);
    r.result = read_job(source, job, options, target);
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

// --- gpuscope serve's own labels (--naming gpuscope) ---------------------------------------

// gpuscope serve's labels of GPU 0 (GPU-aaa) itself (no `gi`) or of its instance `gi`, with the
// job label of the processes on it (none: no label).
tsdb::Labels serve(const std::string& name, std::optional<unsigned> gi, const std::string& job,
                   const std::string& profile = "1g.10gb") {
  tsdb::Labels l = {{"__name__", name},
                    {"gpu", "0"},
                    {"uuid", "GPU-aaa"},
                    {"hostname", "n1"},
                    {"instance", "n1:9108"}};
  if (gi) {
    l["gpu_instance_id"] = std::to_string(*gi);
    l["mig_profile"] = profile;
    l["mig_uuid"] = fmt::format("MIG-{}{}{}", *gi, *gi, *gi);
  }
  if (!job.empty()) l["slurm_job_id"] = job;
  return l;
}

// GPU 0 in MIG mode as gpuscope serve exports it: its own series (300 W, its energy counter in
// joules, 50 °C, the whole GPU's SM activity 60 %) with no job label, and instances 7 and 8
// (1g.10gb) of job 123 and 9 (3g.40gb) of job 999 with their SM activity and memory only. GPU 1
// (GPU-bbb) is a whole GPU of job 123 at 200 W.
void add_serve_node(FakeSource& src) {
  src.add(serve("gpuscope_power_watts", std::nullopt, ""), flat(300));
  src.add(serve("gpuscope_energy_joules_total", std::nullopt, ""), rising(5e3, 4.5e3));
  src.add(serve("gpuscope_temperature_celsius", std::nullopt, ""), flat(50));
  src.add(serve("gpuscope_sm_active_ratio", std::nullopt, ""), flat(0.6));
  tsdb::Labels info = serve("gpuscope_gpu_info", std::nullopt, "");
  info["name"] = "NVIDIA H100 80GB HBM3";
  info["pci_bus_id"] = "00000000:1A:00.0";
  src.add(info, flat(1));
  const std::vector<std::tuple<unsigned, std::string, std::string, double, double>> instances = {
      {7, "1g.10gb", "123", 0.2, 1e9},
      {8, "1g.10gb", "123", 0.4, 3e9},
      {9, "3g.40gb", "999", 0.9, 3e10}};
  for (const auto& [gi, profile, job, sm, used] : instances) {
    src.add(serve("gpuscope_sm_active_ratio", gi, job, profile), flat(sm));
    src.add(serve("gpuscope_memory_used_bytes", gi, job, profile), flat(used));
    tsdb::Labels gi_info = serve("gpuscope_gpu_info", gi, "", profile);
    gi_info["name"] = "NVIDIA H100 80GB HBM3 MIG " + profile;
    gi_info["pci_bus_id"] = "00000000:1A:00.0";
    src.add(gi_info, flat(1));
  }
  tsdb::Labels whole = {{"__name__", "gpuscope_power_watts"},
                        {"gpu", "1"},
                        {"uuid", "GPU-bbb"},
                        {"hostname", "n1"},
                        {"instance", "n1:9108"},
                        {"slurm_job_id", "123"}};
  src.add(whole, flat(200));
  whole["__name__"] = "gpuscope_sm_active_ratio";
  src.add(whole, flat(0.5));
}

TEST(MonitoringMig, GpuscopeServeLabelsOfAnInstance) {
  const auto mig = mig_instance(serve("gpuscope_sm_active_ratio", 7, "123"));
  ASSERT_TRUE(mig);
  EXPECT_EQ(mig->gpu_instance_id, 7U);
  EXPECT_EQ(mig->profile, "1g.10gb");
  EXPECT_EQ(mig->mig_uuid, "MIG-777");
  EXPECT_FALSE(mig_instance(serve("gpuscope_power_watts", std::nullopt, "")));
  EXPECT_EQ(gpu_key(serve("x", 7, "123"), {"n1"}), "GPU-aaa GI 7");
  EXPECT_EQ(gpu_key(serve("x", std::nullopt, ""), {"n1"}), "GPU-aaa");
}

void expect_serve_run(const Read& r) {
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
  for (const auto& [index, gi, sm, used] :
       {std::tuple{1007U, 7U, 20.0, 1e9}, std::tuple{1008U, 8U, 40.0, 3e9}}) {
    const DeviceDescription* d = device(r, index);
    ASSERT_NE(d, nullptr);
    ASSERT_TRUE(d->mig);
    EXPECT_EQ(d->mig->parent_index, 0U);
    EXPECT_EQ(d->mig->gpu_instance_id, gi);
    EXPECT_EQ(d->mig->profile, "1g.10gb");
    EXPECT_EQ(d->mig->gpu_slices, 1U);
    EXPECT_EQ(d->uuid, fmt::format("MIG-{}{}{}", gi, gi, gi)) << "its own UUID, from mig_uuid";
    EXPECT_EQ(d->name, "NVIDIA H100 80GB HBM3 MIG 1g.10gb") << "gpuscope_gpu_info's, once";
    EXPECT_EQ(d->pci_bus_id, "00000000:1A:00.0");
    const auto& rows = r.rows.at(index);
    expect_all(rows, Metric::SmActivePct, sm);
    expect_all(rows, Metric::MemoryUsedBytes, used);
    for (Metric m : {Metric::PowerW, Metric::EnergyMj, Metric::TemperatureC}) expect_none(rows, m);
  }
  // The GPU's own series, which carry no job label, are its row: power once, the whole GPU's
  // activity.
  const auto& gpu_rows = r.rows.at(0);
  expect_all(gpu_rows, Metric::PowerW, 300);
  expect_all(gpu_rows, Metric::TemperatureC, 50);
  expect_all(gpu_rows, Metric::SmActivePct, 60);
  EXPECT_TRUE(gpu_rows.front().get(Metric::EnergyMj).has_value());
  double watts = 0;
  for (const auto& [index, rows] : r.rows) watts += rows.front().get(Metric::PowerW).value_or(0);
  EXPECT_DOUBLE_EQ(watts, 500);
}

TEST(MonitoringMig, GpuscopeServeInstancesAreDevicesAndTheirGpuIsReadByUuid) {
  FakeSource src;
  add_serve_node(src);
  const Read r = read(src);
  expect_serve_run(r);
  EXPECT_NE(r.result.matched_by.find("GPUs of the job's MIG instances"), std::string::npos)
      << r.result.matched_by;
  EXPECT_FALSE(said(r.result, "never added up")) << "the GPU's own series were there";
  EXPECT_FALSE(said(r.result, "was shared"));
  bool asked_gpu = false;
  for (const auto& sel : src.asked) {
    asked_gpu = asked_gpu || (sel.find("uuid=~\"GPU-aaa\"") != std::string::npos &&
                              sel.find("gpu_instance_id=\"\"") != std::string::npos);
  }
  EXPECT_TRUE(asked_gpu) << "the GPU's own series, asked by its UUID, without instance labels";
}

TEST(MonitoringMig, GpuscopeServeSummariesKeepTheSameDevices) {
  FakeSource src;
  add_serve_node(src);
  MonitoringOptions options;
  options.force_summary = true;
  options.summary_buckets = 3;
  const Read r = read(src, options);
  EXPECT_TRUE(r.result.summarised);
  std::vector<unsigned> indices;
  for (const auto& d : r.devices) indices.push_back(d.index);
  EXPECT_EQ(indices, (std::vector<unsigned>{0, 1, 1007, 1008}));
  expect_all(r.rows.at(0), Metric::PowerW, 300);
  expect_all(r.rows.at(1007), Metric::SmActivePct, 20);
  expect_none(r.rows.at(1007), Metric::PowerW);
}

// --- gpuscope serve --naming jobstats: GPU_I_ID under the GPU's uuid ------------------------

// jobstats' labels of GPU 0 (GPU-aaa) itself (gi "") or of instance `gi`, on job `job`.
tsdb::Labels jobstats(const std::string& name, const std::string& gi, const std::string& job) {
  return {{"__name__", name},
          {"GPU_I_ID", gi},
          {"jobid", job},
          {"minor_number", "0"},
          {"name", "NVIDIA H100 80GB HBM3"},
          {"ordinal", "0"},
          {"userid", job.empty() ? "" : "1000"},
          {"uuid", "GPU-aaa"},
          {"instance", "n1:9445"}};
}

// GPU 0 in MIG mode, its own series at 300 W and 50 °C with no job; instances 7 (job 123) and 8
// (job `other`), each with its SM activity, memory, memory size and job id series.
void add_jobstats_node(FakeSource& src, const std::string& label_of_7 = "123",
                       const std::string& other = "999") {
  src.add(jobstats("nvidia_gpu_power_usage_milliwatts", "", ""), flat(300'000));
  src.add(jobstats("nvidia_gpu_temperature_celsius", "", ""), flat(50));
  src.add(jobstats("nvidia_gpu_memory_total_bytes", "", ""), flat(80e9));
  for (const auto& [gi, label, id, sm] :
       {std::tuple{"7", label_of_7, 123.0, 0.2}, {"8", other, std::stod(other), 0.7}}) {
    src.add(jobstats("nvidia_gpu_sm_util_percent", gi, label), flat(sm));
    src.add(jobstats("nvidia_gpu_memory_used_bytes", gi, label), flat(1e9));
    src.add(jobstats("nvidia_gpu_memory_total_bytes", gi, label), flat(10e9));
    src.add(jobstats("nvidia_gpu_jobId", gi, label), flat(id));
  }
}

void expect_jobstats_run(const Read& r) {
  std::vector<unsigned> indices;
  for (const auto& d : r.devices) indices.push_back(d.index);
  EXPECT_EQ(indices, (std::vector<unsigned>{0, mig_device_index(0, 7)}));
  const DeviceDescription* gpu = device(r, 0);
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->uuid, "GPU-aaa");
  EXPECT_EQ(gpu->mig_enabled, true);
  EXPECT_EQ(gpu->memory_total_bytes, 80'000'000'000ULL);
  const DeviceDescription* gi7 = device(r, 1007);
  ASSERT_NE(gi7, nullptr);
  ASSERT_TRUE(gi7->mig);
  EXPECT_EQ(gi7->mig->parent_index, 0U);
  EXPECT_EQ(gi7->mig->gpu_instance_id, 7U);
  EXPECT_FALSE(gi7->mig->profile) << "jobstats' labels hold no profile";
  EXPECT_FALSE(gi7->mig->gpu_slices);
  EXPECT_FALSE(gi7->uuid) << "uuid is its GPU's";
  EXPECT_EQ(gi7->memory_total_bytes, 10'000'000'000ULL);
  expect_all(r.rows.at(0), Metric::PowerW, 300);
  expect_all(r.rows.at(0), Metric::TemperatureC, 50);
  expect_all(r.rows.at(1007), Metric::SmActivePct, 20);
  expect_none(r.rows.at(1007), Metric::PowerW);
}

TEST(MonitoringMig, JobstatsNamingInstanceByItsJobLabel) {
  FakeSource src;
  add_jobstats_node(src);
  const Read r = read(src);
  expect_jobstats_run(r);
  EXPECT_FALSE(said(r.result, "was shared"));
}

TEST(MonitoringMig, JobstatsNamingInstanceByItsJobIdValue) {
  // No series carries the job label: the instance whose nvidia_gpu_jobId is 123 is the job's,
  // not every series of its GPU's UUID.
  FakeSource src;
  add_jobstats_node(src, "", "124");
  const Read r = read(src);
  expect_jobstats_run(r);
  EXPECT_NE(r.result.matched_by.find("nvidia_gpu_jobId"), std::string::npos) << r.result.matched_by;
}

}  // namespace
}  // namespace gpuscope::ingest
