// `serve --naming jobstats`: the shape of Princeton jobstats' GPU exporter (names, units, labels,
// the job id as the value of nvidia_gpu_jobId), and the node name serve's other namings carry.
#include "exporter/jobstats_exposition.hpp"

#include <gtest/gtest.h>

#include "exporter/exposition.hpp"
#include "sample_rows.hpp"

namespace gpuscope::exporter {
namespace {

using testing::gpu;
using testing::row;

Snapshot snapshot_of(const std::vector<SampleRow>& rows) {
  LatestValues latest({gpu(0), gpu(1)});
  for (const auto& r : rows) latest.on_sample(r);
  return latest.snapshot();
}

// The labels of GPU `index` in the exporter's order, with `job` and `uid`.
std::string labels(unsigned index, const std::string& job, const std::string& uid,
                   const std::string& extra = "") {
  return "{GPU_I_ID=\"\",jobid=\"" + job + "\",minor_number=\"" + std::to_string(index) +
         "\",name=\"NVIDIA H100 80GB HBM3\",ordinal=\"" + std::to_string(index) + "\"," + extra +
         "userid=\"" + uid + "\",uuid=\"GPU-0000000" + std::to_string(index) + "\"}";
}

bool has(const std::string& page, const std::string& line) {
  return page.find(line + "\n") != std::string::npos;
}

SampleRow full_row(unsigned index) {
  SampleRow r = row(index, 5'000'000'000, 312.625);
  r.set(Metric::GpuUtilPct, 87);
  r.set(Metric::TemperatureC, 64);
  r.set(Metric::SmClockMhz, 1980);
  r.set(Metric::MemClockMhz, 2619);
  r.set(Metric::GraphicsClockMhz, 1980);
  r.set(Metric::TensorActivePct, 50);
  r.set(Metric::DramActivePct, 25);
  r.set(Metric::IntegerActivePct, 10);
  r.set(Metric::PcieTxBytesPerS, 1.5e9);
  r.set(Metric::NvlinkRxBytesPerS, 2e10);
  return r;
}

TEST(JobstatsExposition, NamesUnitsAndTheJobIdAsValue) {
  Exposition exposition(Naming::Jobstats, {"node1", {{"slurm_job_id", "9"}}, "550"},
                        {gpu(0), gpu(1)});
  exposition.set_workload({{0, {{"jobid", "1191148"}, {"userid", "262563"}}}});
  const std::string page = exposition.render(snapshot_of({full_row(0), full_row(1)}));
  const std::string job0 = labels(0, "1191148", "262563");
  const std::string idle1 = labels(1, "", "");
  // Units as that exporter's: % duty cycle, mW, °C, bytes, MHz; GPM ratios 0-1; bytes/s.
  EXPECT_TRUE(has(page, "nvidia_gpu_duty_cycle" + job0 + " 87")) << page;
  EXPECT_TRUE(has(page, "nvidia_gpu_power_usage_milliwatts" + job0 + " 312625"));
  EXPECT_TRUE(has(page, "nvidia_gpu_temperature_celsius" + job0 + " 64"));
  EXPECT_TRUE(has(page, "nvidia_gpu_memory_used_bytes" + job0 + " 25769803776"));
  EXPECT_TRUE(has(page, "nvidia_gpu_memory_total_bytes" + job0 + " 85899345920"));
  EXPECT_TRUE(
      has(page, "nvidia_gpu_clock" + labels(0, "1191148", "262563", "type=\"sm\",") + " 1980"));
  EXPECT_TRUE(
      has(page, "nvidia_gpu_clock" + labels(0, "1191148", "262563", "type=\"mem\",") + " 2619"));
  EXPECT_TRUE(has(
      page, "nvidia_gpu_clock" + labels(0, "1191148", "262563", "type=\"graphics\",") + " 1980"));
  EXPECT_TRUE(has(page, "nvidia_gpu_clock_event_reason" +
                            labels(0, "1191148", "262563", "reason=\"swpowercap\",") + " 4"));
  EXPECT_TRUE(has(page, "nvidia_gpu_sm_util_percent" + job0 + " 0.61"));
  EXPECT_TRUE(has(page, "nvidia_gpu_any_tensor_util_percent" + job0 + " 0.5"));
  EXPECT_TRUE(has(page, "nvidia_gpu_dram_bw_util_percent" + job0 + " 0.25"));
  EXPECT_TRUE(has(page, "nvidia_gpu_integer_util" + job0 + " 0.1"));
  EXPECT_TRUE(has(page, "nvidia_gpu_pcie_tx_per_sec" + job0 + " 1500000000"));
  EXPECT_TRUE(has(page, "nvidia_gpu_nvlink_total_rx_per_sec" + job0 + " 20000000000"));
  // The job: its id and its user's uid as values, and as labels on every series of the GPU.
  EXPECT_TRUE(has(page, "nvidia_gpu_jobId" + job0 + " 1191148"));
  EXPECT_TRUE(has(page, "nvidia_gpu_jobUid" + job0 + " 262563"));
  // A GPU without a job: empty jobid and userid, and no jobId or jobUid series, as the exporter.
  EXPECT_TRUE(has(page, "nvidia_gpu_duty_cycle" + idle1 + " 87"));
  EXPECT_EQ(page.find("nvidia_gpu_jobId{GPU_I_ID=\"\",jobid=\"\""), std::string::npos);
  EXPECT_EQ(page.find("nvidia_gpu_jobUid{GPU_I_ID=\"\",jobid=\"\""), std::string::npos);
  EXPECT_TRUE(has(page, "# TYPE nvidia_gpu_num_devices gauge\nnvidia_gpu_num_devices 2"));
  // Its shape only: no hostname (jobstats knows the node by the scrape target), no gpuscope_*
  // series, no per-process series; every family a gauge, in name order.
  EXPECT_EQ(page.find("hostname"), std::string::npos);
  EXPECT_EQ(page.find("gpuscope_"), std::string::npos);
  EXPECT_EQ(page.find("slurm_job_id"), std::string::npos);
  EXPECT_EQ(page.find(" counter\n"), std::string::npos);
  EXPECT_LT(page.find("# HELP nvidia_gpu_any_tensor_util_percent"),
            page.find("# HELP nvidia_gpu_clock "));
  EXPECT_LT(page.find("# HELP nvidia_gpu_jobId"), page.find("# HELP nvidia_gpu_jobUid"));
  EXPECT_EQ(exposition.label_body(0), "");
}

TEST(JobstatsExposition, MetricsTheExporterDoesNotHaveAreLeftOut) {
  EXPECT_FALSE(exported_metric(Metric::EnergyMj, Naming::Jobstats));
  EXPECT_FALSE(exported_metric(Metric::MemUtilPct, Naming::Jobstats));
  EXPECT_FALSE(exported_metric(Metric::FlopActivePct, Naming::Jobstats));
  EXPECT_EQ(exported_metric(Metric::PowerW, Naming::Jobstats)->name,
            "nvidia_gpu_power_usage_milliwatts");
  EXPECT_EQ(naming_from_text("jobstats"), Naming::Jobstats);
  // Pushes always use gpuscope's names: a jobstats exposition writes no push lines.
  const Exposition exposition(Naming::Jobstats, {"h", {}, ""}, {gpu(0)});
  std::string out;
  EXPECT_EQ(exposition.append_lines(row(0, 1, 250), out), 0u);
}

TEST(JobstatsExposition, PowerIsWholeMilliwattsAndReasonsAreTheExportersWords) {
  const Exposition exposition(Naming::Jobstats, {"h", {}, ""}, {gpu(0)});
  SampleRow r = row(0, 1, 0.1 + 0.2);  // 300.00000000000006 mW before rounding
  r.set(Metric::ClockEventReasons, 0x1 | 0x8 | 0x100);
  const std::string page = exposition.render(snapshot_of({r}));
  EXPECT_TRUE(has(page, "nvidia_gpu_power_usage_milliwatts" + labels(0, "", "") + " 300")) << page;
  EXPECT_TRUE(has(page, "nvidia_gpu_clock_event_reason" +
                            labels(0, "", "", "reason=\"idle,hwslowdown,limited\",") + " 265"));
  EXPECT_EQ(jobstats_clock_reasons(0), "none");
  EXPECT_EQ(jobstats_clock_reasons(0x20 | 0x40 | 0x80),
            "swthermalslowdown,hwthermalslowdown,hwpowerbrakeslowdown");
  EXPECT_EQ(jobstats_clock_reasons(0x2 | 0x10), "application,syncboost");
}

TEST(JobstatsExposition, LostAndUnsampledGpusHaveNoSeries) {
  const Exposition exposition(Naming::Jobstats, {"h", {}, ""}, {gpu(0), gpu(1)});
  const std::string page = exposition.render(snapshot_of({row(1, 1, 100)}));
  EXPECT_EQ(page.find("ordinal=\"0\""), std::string::npos) << page;
  EXPECT_NE(page.find("ordinal=\"1\""), std::string::npos);
  EXPECT_TRUE(has(page, "nvidia_gpu_num_devices 2"));
}

TEST(JobstatsExposition, AMigInstanceHasItsGpuInstanceIdUnderItsParent) {
  GpuIdentity instance = gpu(1);
  instance.index = mig_device_index(1, 9);
  instance.mig = MigIdentity{};
  instance.mig->parent_index = 1;
  instance.mig->gpu_instance_id = 9;
  LatestValues latest({gpu(1), instance});
  SampleRow r = row(instance.index, 5'000'000'000, 0);
  latest.on_sample(r);
  const std::string page = render_jobstats(latest.snapshot(), {gpu(1), instance}, {});
  EXPECT_NE(page.find("{GPU_I_ID=\"9\",jobid=\"\",minor_number=\"1\","), std::string::npos) << page;
  EXPECT_EQ(page.find("minor_number=\"1009\""), std::string::npos);
}

TEST(NodeLabel, GivenNameThenTheSchedulersThenTheHosts) {
  EXPECT_EQ(node_label("n1", std::string("slurm-node"), "host"), "n1");
  EXPECT_EQ(node_label("", std::string("slurm-node"), "host"), "slurm-node");
  EXPECT_EQ(node_label("", std::string(""), "host"), "host");
  EXPECT_EQ(node_label("", std::nullopt, "host"), "host");
}

}  // namespace
}  // namespace gpuscope::exporter
