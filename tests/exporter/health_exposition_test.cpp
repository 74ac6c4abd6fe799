// The GPU health families of the exporter (docs/live.md, "GPU health"): gpuscope's names and
// units, dcgm-exporter's (its 25 default families and the commented-out ones gpuscope has the
// data for), the Xid series, the NVLink bandwidth rate, and what promtool says of the page.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "core/xid_catalog.hpp"
#include "exporter/exposition.hpp"
#include "sample_rows.hpp"
#include "support/promtool.hpp"

namespace gpuscope::exporter {
namespace {

using testing::gpu;

constexpr std::int64_t kSecond = 1'000'000'000;

// Every catalog metric present, each a value of its own.
SampleRow full_sample(unsigned index, std::int64_t wall_ns) {
  SampleRow r;
  r.device_index = index;
  r.wall_ns = wall_ns;
  r.mono_ns = wall_ns;
  for (const auto& m : kMetrics) r.set(m.id, 10 + static_cast<double>(m.id));
  return r;
}

// Every health metric present, each a value of its own: metric i holds 100 + i (flags 1).
HealthRow full_health(unsigned index, std::int64_t mono_ns, double nvlink_kib = 5000) {
  HealthRow h;
  h.device_index = index;
  h.wall_ns = mono_ns;
  h.mono_ns = mono_ns;
  for (const auto& info : kHealthMetrics) {
    h.set(info.id, info.kind == HealthKind::Flag ? 1 : 100 + static_cast<double>(info.id));
  }
  h.set(HealthMetric::NvlinkTxKib, nvlink_kib);
  h.set(HealthMetric::NvlinkRxKib, nvlink_kib);
  return h;
}

double value_of(HealthMetric metric) {
  return 100 + static_cast<double>(metric);
}

Event xid_event(unsigned index, unsigned xid) {
  return {0, 0, index, EventKind::Xid, xid_title(xid)};
}

std::string render(Naming naming, LatestValues& latest, std::vector<GpuIdentity> gpus) {
  const Exposition exposition(naming, {"node1", {}, "550.54.15"}, gpus);
  return exposition.render(latest.snapshot());
}

// The value of the first sample line that begins with `prefix`; "absent" when there is none.
std::string sample_value(const std::string& text, const std::string& prefix) {
  const auto at = text.find("\n" + prefix);
  if (at == std::string::npos) return "absent";
  const auto end = text.find('\n', at + 1);
  const auto space = text.rfind(' ', end);
  return text.substr(space + 1, end - space - 1);
}

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
}

// The families of a page: name → type, failing the test on a second TYPE of one name or on a
// sample whose family is not the one its TYPE line opened (promtool rejects both).
std::map<std::string, std::string> families_of(const std::string& text) {
  std::map<std::string, std::string> families;
  std::istringstream in(text);
  std::string current;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream words(line.substr(7));
      std::string name, type;
      words >> name >> type;
      EXPECT_TRUE(families.emplace(name, type).second) << "second TYPE for " << name;
      current = name;
    } else if (!line.empty() && line[0] != '#') {
      const std::string name = line.substr(0, line.find_first_of("{ "));
      EXPECT_EQ(name, current) << line;
    }
  }
  return families;
}

TEST(HealthExpositionTest, GpuscopeNamesUseBaseUnitsAndLabels) {
  LatestValues latest({gpu(0)});
  latest.on_sample(full_sample(0, kSecond));
  latest.on_health(full_health(0, kSecond));
  const std::string text = render(Naming::Gpuscope, latest, {gpu(0)});
  const std::string labels = "gpu=\"0\",uuid=\"GPU-00000000\",hostname=\"node1\"";
  const auto line = [&](const std::string& name, const std::string& extra, double value) {
    return name + "{" + labels + extra + "} " + format_value(value);
  };
  EXPECT_TRUE(has_line(text, line("gpuscope_gpu_ecc_enabled", "", 1))) << text;
  EXPECT_TRUE(has_line(
      text, line("gpuscope_gpu_ecc_errors_total", ",type=\"uncorrected\",counter=\"aggregate\"",
                 value_of(HealthMetric::EccUncorrectedAggregate))));
  EXPECT_TRUE(has_line(text, line("gpuscope_gpu_remapped_rows_total", ",type=\"correctable\"",
                                  value_of(HealthMetric::RemappedRowsCorrectable))));
  EXPECT_TRUE(has_line(text, line("gpuscope_gpu_row_remap_pending", "", 1)));
  EXPECT_TRUE(has_line(text, line("gpuscope_gpu_retired_pages_total", ",cause=\"dbe\"",
                                  value_of(HealthMetric::RetiredPagesDbe))));
  EXPECT_TRUE(has_line(
      text, line("gpuscope_gpu_pcie_replays_total", "", value_of(HealthMetric::PcieReplays))));
  // % to a ratio, ns to seconds, KiB to bytes.
  EXPECT_TRUE(has_line(text, line("gpuscope_gpu_encoder_util_ratio", "",
                                  value_of(HealthMetric::EncoderUtilPct) * 0.01)));
  EXPECT_TRUE(has_line(text, line("gpuscope_gpu_violation_seconds_total", ",reason=\"hw_thermal\"",
                                  value_of(HealthMetric::ViolationHwThermalNs) * 1e-9)));
  EXPECT_TRUE(has_line(text, line("gpuscope_gpu_nvlink_errors_total", ",type=\"crc_flit\"",
                                  value_of(HealthMetric::NvlinkCrcFlitErrors))));
  EXPECT_TRUE(has_line(
      text, line("gpuscope_gpu_nvlink_data_bytes_total", ",direction=\"rx\"", 5000.0 * 1024)));
  // No Xid yet: the last is 0 and none were counted.
  EXPECT_TRUE(has_line(text, line("gpuscope_gpu_xid_last", "", 0)));
  EXPECT_TRUE(has_line(text, line("gpuscope_gpu_xid_errors_total", "", 0)));
  // Every health value of the catalog is exported once: 32 values, 11 of them violations.
  std::size_t health_lines = 0;
  for (const HealthFamily& family : health_families(Naming::Gpuscope)) {
    for (std::size_t at = text.find("\n" + std::string(family.name) + "{"); at != std::string::npos;
         at = text.find("\n" + std::string(family.name) + "{", at + 1))
      ++health_lines;
  }
  EXPECT_EQ(health_lines, kHealthMetricCount + 2);  // + the two Xid families
  EXPECT_EQ(families_of(text).count("gpuscope_gpu_violation_seconds_total"), 1u);
}

TEST(HealthExpositionTest, XidsAreTheLastNumberAndACount) {
  LatestValues latest({gpu(0), gpu(1)});
  latest.on_sample(full_sample(0, kSecond));
  latest.on_sample(full_sample(1, kSecond));
  latest.on_event(xid_event(1, 48));
  latest.on_event(xid_event(1, 79));
  const std::string text = render(Naming::Gpuscope, latest, {gpu(0), gpu(1)});
  EXPECT_TRUE(has_line(
      text, "gpuscope_gpu_xid_last{gpu=\"1\",uuid=\"GPU-00000001\",hostname=\"node1\"} 79"))
      << text;
  EXPECT_TRUE(has_line(
      text, "gpuscope_gpu_xid_errors_total{gpu=\"1\",uuid=\"GPU-00000001\",hostname=\"node1\"} 2"));
  EXPECT_TRUE(has_line(
      text, "gpuscope_gpu_xid_last{gpu=\"0\",uuid=\"GPU-00000000\",hostname=\"node1\"} 0"));
  // A GPU never sampled and without Xids has no Xid series; a detail without a number is 999.
  LatestValues quiet({gpu(0)});
  EXPECT_EQ(render(Naming::Gpuscope, quiet, {gpu(0)}).find("gpuscope_gpu_xid"), std::string::npos);
  quiet.on_event({0, 0, 0u, EventKind::Xid, "an Xid the driver did not number"});
  EXPECT_EQ(quiet.snapshot().gpus[0].last_xid, 999u);
  EXPECT_EQ(quiet.snapshot().gpus[0].xid_events, 1);
}

TEST(HealthExpositionTest, AbsentValuesHaveNoSeriesAndLostGpusKeepOnlyTheirXids) {
  LatestValues latest({gpu(0)});
  latest.on_sample(full_sample(0, kSecond));
  HealthRow some;
  some.device_index = 0;
  some.set(HealthMetric::PcieReplays, 1);
  latest.on_health(some);
  std::string text = render(Naming::Gpuscope, latest, {gpu(0)});
  EXPECT_NE(text.find("gpuscope_gpu_pcie_replays_total{"), std::string::npos);
  EXPECT_EQ(text.find("gpuscope_gpu_ecc"), std::string::npos) << text;
  EXPECT_EQ(text.find("nvlink_data"), std::string::npos);
  // A later row without a value keeps the one held (as samples do).
  HealthRow later;
  later.device_index = 0;
  later.set(HealthMetric::EccEnabled, 1);
  latest.on_health(later);
  EXPECT_EQ(latest.snapshot().gpus[0].health.get(HealthMetric::PcieReplays), 1);
  EXPECT_EQ(latest.snapshot().gpus[0].health_rows, 2);
  latest.on_event(xid_event(0, 79));
  latest.on_event({0, 0, 0u, EventKind::GpuLost, "GPU 0 fell off the bus"});
  text = render(Naming::Gpuscope, latest, {gpu(0)});
  EXPECT_EQ(text.find("gpuscope_gpu_pcie_replays_total{"), std::string::npos);
  EXPECT_NE(text.find("gpuscope_gpu_xid_last{gpu=\"0\",uuid=\"GPU-00000000\",hostname=\"node1\"} "
                      "79\n"),
            std::string::npos)
      << text;
  text = render(Naming::Dcgm, latest, {gpu(0)});
  EXPECT_NE(text.find("err_code=\"79\",err_msg=\"GPU has fallen off the bus\"} 79\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("DCGM_FI_DEV_VGPU_LICENSE_STATUS{"), std::string::npos);
}

TEST(HealthExpositionTest, DcgmXidSeriesCarriesCodeAndMessageAfterTheFixedLabels) {
  LatestValues latest({gpu(0)});
  latest.on_sample(full_sample(0, kSecond));
  const std::string prefix =
      "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\",UUID=\"GPU-00000000\",pci_bus_id=\"00000000:18:00.0\","
      "device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node1\","
      "DCGM_FI_DRIVER_VERSION=\"550.54.15\",";
  std::string text = render(Naming::Dcgm, latest, {gpu(0)});
  EXPECT_TRUE(has_line(text, prefix + "err_code=\"0\",err_msg=\"No Error\"} 0")) << text;
  latest.on_event(xid_event(0, 48));
  text = render(Naming::Dcgm, latest, {gpu(0)});
  EXPECT_TRUE(has_line(text, prefix + "err_code=\"48\",err_msg=\"Double Bit ECC Error\"} 48"))
      << text;
  EXPECT_EQ(text.find("err_code=\"0\""), std::string::npos);  // one series per GPU
  latest.on_event(xid_event(0, 200));
  text = render(Naming::Dcgm, latest, {gpu(0)});
  EXPECT_TRUE(has_line(text, prefix + "err_code=\"200\",err_msg=\"Unknown Error\"} 200")) << text;
  // dcgm-exporter has no count of Xids in its default families.
  EXPECT_EQ(text.find("xid_errors_total"), std::string::npos);
}

TEST(HealthExpositionTest, DcgmNvlinkBandwidthIsDcgmsRate) {
  LatestValues latest({gpu(0)});
  latest.on_sample(full_sample(0, kSecond));
  const auto value = [&] {
    return sample_value(render(Naming::Dcgm, latest, {gpu(0)}),
                        "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL{gpu=\"0\"");
  };
  EXPECT_EQ(value(), "absent");
  latest.on_health(full_health(0, 10 * kSecond, 5000));
  EXPECT_EQ(value(), "0");  // the first reading, as DCGM
  // 2 s later tx and rx grew by 4000 KiB each: 8000 KiB / 2 s / 1000 = 4.
  latest.on_health(full_health(0, 12 * kSecond, 9000));
  EXPECT_EQ(value(), "4");
  latest.on_health(full_health(0, 13 * kSecond, 10));  // the counters went back: a driver reload
  EXPECT_EQ(value(), "0");
}

// dcgm-exporter's default counters file, NVIDIA/dcgm-exporter etc/default-counters.csv at tag
// 4.5.3-4.8.2 (691c92762eb551313c825f6efe4ceeee20982801): its 25 metric families and their types
// (its one label field, DCGM_FI_DRIVER_VERSION, is checked as a label).
struct DefaultFamily {
  const char* name;
  const char* type;
};
constexpr DefaultFamily kDefaultCounters[] = {
    {"DCGM_FI_DEV_SM_CLOCK", "gauge"},
    {"DCGM_FI_DEV_MEM_CLOCK", "gauge"},
    {"DCGM_FI_DEV_MEMORY_TEMP", "gauge"},
    {"DCGM_FI_DEV_GPU_TEMP", "gauge"},
    {"DCGM_FI_DEV_POWER_USAGE", "gauge"},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter"},
    {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter"},
    {"DCGM_FI_DEV_GPU_UTIL", "gauge"},
    {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge"},
    {"DCGM_FI_DEV_ENC_UTIL", "gauge"},
    {"DCGM_FI_DEV_DEC_UTIL", "gauge"},
    {"DCGM_FI_DEV_XID_ERRORS", "gauge"},
    {"DCGM_FI_DEV_FB_FREE", "gauge"},
    {"DCGM_FI_DEV_FB_USED", "gauge"},
    {"DCGM_FI_DEV_FB_RESERVED", "gauge"},
    {"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter"},
    {"DCGM_FI_DEV_VGPU_LICENSE_STATUS", "gauge"},
    {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter"},
    {"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter"},
    {"DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge"},
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge"},
    {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge"},
    {"DCGM_FI_PROF_DRAM_ACTIVE", "gauge"},
    {"DCGM_FI_PROF_PCIE_TX_BYTES", "gauge"},
    {"DCGM_FI_PROF_PCIE_RX_BYTES", "gauge"},
};

TEST(HealthExpositionTest, DcgmNamingHasEveryFamilyOfDcgmExportersDefaultCounters) {
  static_assert(std::size(kDefaultCounters) == 25);
  LatestValues latest({gpu(0), gpu(1)});
  for (unsigned index : {0u, 1u}) {
    latest.on_sample(full_sample(index, kSecond));
    latest.on_health(full_health(index, kSecond));
  }
  const std::string text = render(Naming::Dcgm, latest, {gpu(0), gpu(1)});
  const auto families = families_of(text);
  for (const DefaultFamily& family : kDefaultCounters) {
    const auto it = families.find(family.name);
    ASSERT_NE(it, families.end()) << family.name << " missing:\n" << text;
    EXPECT_EQ(it->second, family.type) << family.name;
    for (const char* gpu_label : {"{gpu=\"0\",", "{gpu=\"1\","}) {
      const auto at = text.find(std::string("\n") + family.name + gpu_label);
      ASSERT_NE(at, std::string::npos) << family.name << gpu_label;
      const std::string line = text.substr(at + 1, text.find('\n', at + 1) - at - 1);
      EXPECT_NE(line.find(",DCGM_FI_DRIVER_VERSION=\"550.54.15\""), std::string::npos) << line;
    }
  }
  // DCGM's units: % stays %, ns stay ns, counts stay counts.
  EXPECT_EQ(sample_value(text, "DCGM_FI_DEV_ENC_UTIL{gpu=\"0\""),
            format_value(value_of(HealthMetric::EncoderUtilPct)));
  EXPECT_EQ(sample_value(text, "DCGM_FI_DEV_POWER_VIOLATION{gpu=\"1\""),
            format_value(value_of(HealthMetric::ViolationPowerNs)));
  EXPECT_EQ(sample_value(text, "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL{gpu=\"1\""),
            format_value(value_of(HealthMetric::EccUncorrectedAggregate)));
  EXPECT_EQ(sample_value(text, "DCGM_FI_DEV_VGPU_LICENSE_STATUS{gpu=\"0\""), "0");
  EXPECT_EQ(sample_value(text, "DCGM_FI_DEV_ROW_REMAP_PENDING{gpu=\"0\""), "1");
  EXPECT_EQ(text.find("gpuscope_"), std::string::npos);
}

TEST(HealthExpositionTest, PushLinesCarryTheHealthValues) {
  const Exposition exposition(Naming::Gpuscope, {"h", {}, ""}, {gpu(0)});
  std::string out;
  HealthRow row;
  row.device_index = 0;
  row.wall_ns = 1'700'000'000'123'456'789;
  row.set(HealthMetric::PcieReplays, 3);
  row.set(HealthMetric::ViolationPowerNs, 2.5e9);
  EXPECT_EQ(exposition.append_lines(row, out), 2u);
  EXPECT_NE(out.find("gpuscope_gpu_pcie_replays_total{gpu=\"0\",uuid=\"GPU-00000000\","
                     "hostname=\"h\"} 3 1700000000123\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("gpuscope_gpu_violation_seconds_total{gpu=\"0\",uuid=\"GPU-00000000\","
                     "hostname=\"h\",reason=\"power\"} 2.5 1700000000123\n"),
            std::string::npos)
      << out;
  row.device_index = 7;
  EXPECT_EQ(exposition.append_lines(row, out), 0u);
}

// `promtool check metrics < page`: its exit status and its lint lines, sorted.
std::pair<int, std::set<std::string>> check_metrics(const std::string& page) {
  const auto verdict = gpuscope::testing::promtool_check_metrics(page);
  return {verdict.exit_code, {verdict.lines.begin(), verdict.lines.end()}};
}

std::string full_page(Naming naming) {
  LatestValues latest({gpu(0), gpu(1)});
  for (unsigned index : {0u, 1u}) {
    latest.on_sample(full_sample(index, kSecond));
    latest.on_health(full_health(index, kSecond));
    latest.on_health(full_health(index, 2 * kSecond, 6000));
  }
  latest.on_event(xid_event(1, 94));
  return render(naming, latest, {gpu(0), gpu(1)});
}

TEST(HealthExpositionTest, PromtoolFindsNothingInGpuscopeNames) {
  if (gpuscope::testing::promtool().empty()) GTEST_SKIP() << "promtool is not installed";
  const auto [status, lines] = check_metrics(full_page(Naming::Gpuscope));
  EXPECT_EQ(status, 0);
  EXPECT_TRUE(lines.empty()) << *lines.begin();
}

// In dcgm naming promtool's lint finds what dcgm-exporter's own names break: counters without a
// lower-case `_total` suffix, a name with "counter" in it, and its camelCase label `modelName`
// (on every family). Nothing else.
TEST(HealthExpositionTest, PromtoolFindsOnlyDcgmExportersOwnNamesInDcgmNaming) {
  if (gpuscope::testing::promtool().empty()) GTEST_SKIP() << "promtool is not installed";
  const std::string page = full_page(Naming::Dcgm);
  const auto [status, lines] = check_metrics(page);
  EXPECT_EQ(status, 3);
  std::set<std::string> expected = {
      "DCGM_FI_DEV_PCIE_REPLAY_COUNTER metric name should not include type 'counter'"};
  for (const auto& [name, type] : families_of(page)) {
    expected.insert(name + " label names should be written in 'snake_case' not 'camelCase'");
  }
  for (const char* name : {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
                           "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
                           "DCGM_FI_DEV_POWER_VIOLATION",
                           "DCGM_FI_DEV_THERMAL_VIOLATION",
                           "DCGM_FI_DEV_SYNC_BOOST_VIOLATION",
                           "DCGM_FI_DEV_BOARD_LIMIT_VIOLATION",
                           "DCGM_FI_DEV_LOW_UTIL_VIOLATION",
                           "DCGM_FI_DEV_RELIABILITY_VIOLATION",
                           "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
                           "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
                           "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL",
                           "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL",
                           "DCGM_FI_DEV_RETIRED_SBE",
                           "DCGM_FI_DEV_RETIRED_DBE",
                           "DCGM_FI_DEV_RETIRED_PENDING",
                           "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
                           "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL",
                           "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
                           "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL",
                           "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
                           "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
                           "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS"}) {
    expected.insert(std::string(name) + " counter metrics should have \"_total\" suffix");
  }
  EXPECT_EQ(lines, expected);
}

}  // namespace
}  // namespace gpuscope::exporter
