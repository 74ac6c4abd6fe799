// The Prometheus text the exporter serves and pushes: names, units, types, labels, escaping.
#include "exporter/exposition.hpp"

#include <gtest/gtest.h>

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

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ExpositionTest, NamesFollowPrometheusConventions) {
  EXPECT_EQ(exported_metric(Metric::PowerW, Naming::Gpuscope)->name, "gpuscope_power_watts");
  const auto energy = exported_metric(Metric::EnergyMj, Naming::Gpuscope);
  EXPECT_EQ(energy->name, "gpuscope_energy_joules_total");
  EXPECT_EQ(energy->type, "counter");
  EXPECT_DOUBLE_EQ(energy->scale, 1e-3);
  EXPECT_EQ(exported_metric(Metric::SmActivePct, Naming::Gpuscope)->name,
            "gpuscope_sm_active_ratio");
  EXPECT_EQ(exported_metric(Metric::TemperatureC, Naming::Gpuscope)->name,
            "gpuscope_temperature_celsius");
  EXPECT_EQ(exported_metric(Metric::SmClockMhz, Naming::Gpuscope)->name, "gpuscope_sm_clock_hertz");
  EXPECT_EQ(exported_metric(Metric::MemoryUsedBytes, Naming::Gpuscope)->name,
            "gpuscope_memory_used_bytes");
  EXPECT_EQ(exported_metric(Metric::PcieTxBytes, Naming::Gpuscope)->name,
            "gpuscope_pcie_tx_bytes_total");
  EXPECT_EQ(exported_metric(Metric::PcieTxBytesPerS, Naming::Gpuscope)->name,
            "gpuscope_pcie_tx_bytes_per_second");
  // Every catalog metric has a gpuscope name, and the names are unique.
  std::set<std::string> names;
  for (const auto& m : kMetrics) {
    const auto exported = exported_metric(m.id, Naming::Gpuscope);
    ASSERT_TRUE(exported) << m.name;
    EXPECT_TRUE(names.insert(exported->name).second) << exported->name;
  }
}

TEST(ExpositionTest, DcgmNamesUseDcgmUnits) {
  const auto fb = exported_metric(Metric::MemoryUsedBytes, Naming::Dcgm);
  EXPECT_EQ(fb->name, "DCGM_FI_DEV_FB_USED");
  EXPECT_DOUBLE_EQ(24.0 * (1ull << 30) * fb->scale, 24.0 * 1024);  // MiB
  EXPECT_EQ(exported_metric(Metric::SmActivePct, Naming::Dcgm)->name, "DCGM_FI_PROF_SM_ACTIVE");
  EXPECT_EQ(exported_metric(Metric::EnergyMj, Naming::Dcgm)->type, "counter");
  EXPECT_FALSE(exported_metric(Metric::PcieTxBytes, Naming::Dcgm));
}

TEST(ExpositionTest, RendersHelpAndTypeOncePerMetricAndOneLinePerGpu) {
  const Exposition exposition(Naming::Gpuscope, {"node1", {{"slurm_job_id", "42"}}, "550"},
                              {gpu(0), gpu(1)});
  const std::string text =
      exposition.render(snapshot_of({row(0, 5'000'000'000, 312.5), row(1, 5'000'000'000, 100)}));
  EXPECT_EQ(count(text, "# HELP gpuscope_power_watts "), 1u);
  EXPECT_EQ(count(text, "# TYPE gpuscope_power_watts gauge\n"), 1u);
  EXPECT_EQ(count(text, "# TYPE gpuscope_energy_joules_total counter\n"), 1u);
  EXPECT_NE(text.find("gpuscope_power_watts{gpu=\"0\",uuid=\"GPU-00000000\",hostname=\"node1\","
                      "slurm_job_id=\"42\"} 312.5\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("gpuscope_sm_active_ratio{gpu=\"1\",uuid=\"GPU-00000001\",hostname=\"node1\","
                      "slurm_job_id=\"42\"} 0.61\n"),
            std::string::npos);
  EXPECT_NE(text.find("gpuscope_energy_joules_total{gpu=\"0\""), std::string::npos);
  EXPECT_NE(text.find("gpuscope_gpu_info{gpu=\"0\",uuid=\"GPU-00000000\",hostname=\"node1\","
                      "slurm_job_id=\"42\",name=\"NVIDIA H100 80GB HBM3\""),
            std::string::npos);
  // Absent metrics are absent, not zero.
  EXPECT_EQ(text.find("gpuscope_tensor_active_ratio"), std::string::npos);
  // Every sample line has a TYPE before it.
  EXPECT_EQ(count(text, "# TYPE "), count(text, "# HELP "));
}

TEST(ExpositionTest, FlopActivityIsTheSumOfTheFourPipesWhenAllAreRead) {
  SampleRow all = row(0, 1'000'000'000, 300);
  all.set(Metric::Fp64ActivePct, 10);
  all.set(Metric::Fp32ActivePct, 20);
  all.set(Metric::Fp16ActivePct, 30);
  all.set(Metric::TensorActivePct, 50);
  SampleRow three = row(1, 1'000'000'000, 300);
  three.set(Metric::Fp32ActivePct, 20);
  three.set(Metric::Fp16ActivePct, 30);
  three.set(Metric::TensorActivePct, 50);
  const Exposition exposition(Naming::Gpuscope, {"node1", {}, "550"}, {gpu(0), gpu(1)});
  const std::string text = exposition.render(snapshot_of({all, three}));
  EXPECT_NE(
      text.find(
          "gpuscope_flop_active_ratio{gpu=\"0\",uuid=\"GPU-00000000\",hostname=\"node1\"} 1.1\n"),
      std::string::npos)
      << text;
  EXPECT_EQ(text.find("gpuscope_flop_active_ratio{gpu=\"1\""), std::string::npos)
      << "three pipes of four: no FLOP activity";
  EXPECT_NE(text.find("summed over four pipes: 0-4"), std::string::npos);
  EXPECT_FALSE(exported_metric(Metric::FlopActivePct, Naming::Dcgm));
}

TEST(ExpositionTest, DcgmModeUsesDcgmLabels) {
  const Exposition exposition(Naming::Dcgm, {"node1", {}, "550.54.15"}, {gpu(0)});
  const std::string text = exposition.render(snapshot_of({row(0, 1'000'000'000, 300)}));
  // dcgm-exporter's labels in its order (its renderer's template).
  EXPECT_NE(text.find("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-00000000\","
                      "pci_bus_id=\"00000000:18:00.0\",device=\"nvidia0\","
                      "modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node1\","
                      "DCGM_FI_DRIVER_VERSION=\"550.54.15\"} 300\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("DCGM_FI_DEV_FB_USED{"), std::string::npos);
  EXPECT_EQ(text.find("gpuscope_"), std::string::npos);
}

// A GPU in MIG mode and one of its instances, as collect/ describes them.
std::vector<DeviceDescription> mig_devices() {
  DeviceDescription parent;
  parent.index = 0;
  parent.uuid = "GPU-00000000";
  parent.name = "NVIDIA H100 80GB HBM3";
  parent.pci_bus_id = "00000000:18:00.0";
  parent.power_limit_w = 700;
  parent.mig_enabled = true;
  DeviceDescription instance;
  instance.index = mig_device_index(0, 9);
  instance.uuid = "MIG-1d2e3f40-0000-5000-8000-000000000009";
  instance.name = "NVIDIA H100 80GB HBM3 MIG 1g.10gb";
  instance.memory_total_bytes = 10ull << 30;
  MigIdentity mig;
  mig.parent_index = 0;
  mig.gpu_instance_id = 9;
  mig.compute_instance_id = 0;
  mig.profile = "1g.10gb";
  instance.mig = mig;
  return {parent, instance};
}

SampleRow instance_row(std::int64_t wall_ns) {
  SampleRow r;
  r.device_index = mig_device_index(0, 9);
  r.wall_ns = r.mono_ns = wall_ns;
  r.set(Metric::SmActivePct, 40);
  r.set(Metric::MemoryUsedBytes, 2.0 * (1ull << 30));
  return r;
}

TEST(ExpositionTest, MigInstancesCarryDcgmExportersInstanceLabels) {
  const auto identities = identities_of(mig_devices());
  ASSERT_EQ(identities.size(), 2u);
  EXPECT_EQ(identities[1].uuid, "GPU-00000000") << "an instance is exported under its GPU's UUID";
  EXPECT_EQ(identities[1].mig_uuid, "MIG-1d2e3f40-0000-5000-8000-000000000009");
  EXPECT_FALSE(identities[1].power_limit_w) << "the power limit is the parent's";
  LatestValues latest(identities);
  latest.on_sample(row(0, 1'000'000'000, 250));
  latest.on_sample(instance_row(1'000'000'000));
  const Exposition dcgm(Naming::Dcgm, {"node1", {}, "550.54.15"}, identities);
  const std::string text = dcgm.render(latest.snapshot());
  EXPECT_NE(text.find("DCGM_FI_PROF_SM_ACTIVE{gpu=\"0\",UUID=\"GPU-00000000\","
                      "pci_bus_id=\"00000000:18:00.0\",device=\"nvidia0\","
                      "modelName=\"NVIDIA H100 80GB HBM3\",GPU_I_PROFILE=\"1g.10gb\","
                      "GPU_I_ID=\"9\",Hostname=\"node1\","
                      "DCGM_FI_DRIVER_VERSION=\"550.54.15\"} 0.4\n"),
            std::string::npos)
      << text;
  // The power is the GPU's, once, on the GPU's own series: never repeated per instance.
  EXPECT_EQ(count(text, "DCGM_FI_DEV_POWER_USAGE{"), 1u) << text;
  EXPECT_EQ(text.find("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-00000000\","
                      "pci_bus_id=\"00000000:18:00.0\",device=\"nvidia0\","
                      "modelName=\"NVIDIA H100 80GB HBM3\",GPU_I"),
            std::string::npos);
}

TEST(ExpositionTest, MigInstancesCarryGpuscopeInstanceLabels) {
  const auto identities = identities_of(mig_devices());
  LatestValues latest(identities);
  latest.on_sample(instance_row(1'000'000'000));
  const Exposition own(Naming::Gpuscope, {"node1", {}, ""}, identities);
  const std::string text = own.render(latest.snapshot());
  EXPECT_NE(text.find("gpuscope_sm_active_ratio{gpu=\"0\",uuid=\"GPU-00000000\","
                      "gpu_instance_id=\"9\",mig_profile=\"1g.10gb\","
                      "mig_uuid=\"MIG-1d2e3f40-0000-5000-8000-000000000009\","
                      "hostname=\"node1\"} 0.4\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("name=\"NVIDIA H100 80GB HBM3 MIG 1g.10gb\""), std::string::npos)
      << "the info series names the instance";
  EXPECT_EQ(text.find("gpuscope_power_watts{gpu=\"0\",uuid=\"GPU-00000000\",gpu_instance_id"),
            std::string::npos);
}

TEST(ExpositionTest, EscapesLabelValues) {
  EXPECT_EQ(escape_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(format_value(0.1 + 0.2), "0.30000000000000004");  // exact, not rounded
  EXPECT_EQ(format_value(700), "700");
}

TEST(ExpositionTest, PushLinesCarryMillisecondTimestamps) {
  const Exposition exposition(Naming::Gpuscope, {"h", {}, ""}, {gpu(0)});
  std::string out;
  const std::size_t lines = exposition.append_lines(row(0, 1'700'000'000'123'456'789, 250), out);
  EXPECT_EQ(lines, 5u);
  EXPECT_EQ(count(out, "\n"), 5u);
  EXPECT_NE(out.find("gpuscope_power_watts{gpu=\"0\",uuid=\"GPU-00000000\",hostname=\"h\"} 250 "
                     "1700000000123\n"),
            std::string::npos)
      << out;
  // A GPU the exposition does not know produces nothing.
  EXPECT_EQ(exposition.append_lines(row(7, 1, 1), out), 0u);
}

}  // namespace
}  // namespace gpuscope::exporter
