// `gpuscope serve` scraped for real (simulated H100s): the dcgm-exporter families a scrape has
// with `--naming dcgm`, all 25 of its default counters with the health counters the sampler
// reads, and promtool's verdict on both namings' pages.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/ports.hpp"
#include "support/process.hpp"
#include "support/promtool.hpp"
#include "support/scrape.hpp"

namespace gpuscope::testing {
namespace {

using namespace std::chrono_literals;

// The page of `gpuscope serve --naming NAMING` once it holds every one of `wanted` (a sampled
// GPU, its health), or what it last served after 90 s (a loaded CI machine).
std::string scrape(const TempDir& dir, const std::string& naming,
                   const std::vector<std::string>& wanted, const std::string& scenario = "h100") {
  const auto has_all = [&wanted](const std::string& page) {
    for (const auto& w : wanted) {
      if (page.find(w) == std::string::npos) return false;
    }
    return true;
  };
  const int port = free_port();
  auto serve = start_gpuscope({"serve", "--simulate", scenario, "--naming", naming, "--listen",
                               "127.0.0.1:" + std::to_string(port), "--interval", "200"},
                              {{"GPUSCOPE_SIM_STATE", dir.file("state-" + naming + ".json")}},
                              dir.file(naming + ".out"), dir.file(naming + ".err"));
  const std::string page = metrics_when(port, has_all);
  EXPECT_TRUE(has_all(page)) << read_file(dir.file(naming + ".err"));
  return page;
}

// `promtool check metrics < page`: its exit status and what it printed, line by line.
std::pair<int, std::vector<std::string>> check_metrics(const std::string& page) {
  auto verdict = promtool_check_metrics(page);
  return {verdict.exit_code, std::move(verdict.lines)};
}

// The 25 families of dcgm-exporter's default counters file (NVIDIA/dcgm-exporter,
// etc/default-counters.csv at tag 4.5.3-4.8.2): the sampled metrics, the last Xid (0 before
// any), the vGPU licence status (0 on bare metal) and, from the health counters,
// PCIE_REPLAY_COUNTER, ENC_UTIL, DEC_UTIL, NVLINK_BANDWIDTH_TOTAL, the two REMAPPED_ROWS and
// ROW_REMAP_FAILURE.
constexpr const char* kDefaultFamilies[] = {
    "DCGM_FI_DEV_SM_CLOCK",
    "DCGM_FI_DEV_MEM_CLOCK",
    "DCGM_FI_DEV_MEMORY_TEMP",
    "DCGM_FI_DEV_GPU_TEMP",
    "DCGM_FI_DEV_POWER_USAGE",
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
    "DCGM_FI_DEV_GPU_UTIL",
    "DCGM_FI_DEV_MEM_COPY_UTIL",
    "DCGM_FI_DEV_XID_ERRORS",
    "DCGM_FI_DEV_FB_FREE",
    "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_DEV_FB_RESERVED",
    "DCGM_FI_DEV_VGPU_LICENSE_STATUS",
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
    "DCGM_FI_PROF_DRAM_ACTIVE",
    "DCGM_FI_PROF_PCIE_TX_BYTES",
    "DCGM_FI_PROF_PCIE_RX_BYTES",
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
    "DCGM_FI_DEV_ENC_UTIL",
    "DCGM_FI_DEV_DEC_UTIL",
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
    "DCGM_FI_DEV_ROW_REMAP_FAILURE",
};
static_assert(std::size(kDefaultFamilies) == 25);

TEST(ServeExposition, DcgmNamingServesDcgmExportersDefaultFamilies) {
  TempDir dir;
  // GPM's ratios come from the second sample on: wait for them.
  const std::string page = scrape(
      dir, "dcgm",
      {"\nDCGM_FI_PROF_DRAM_ACTIVE{gpu=\"0\"", "\nDCGM_FI_DEV_PCIE_REPLAY_COUNTER{gpu=\"0\""});
  for (const char* family : kDefaultFamilies) {
    EXPECT_NE(page.find(std::string("\n# TYPE ") + family + " "), std::string::npos) << family;
    EXPECT_NE(page.find(std::string("\n") + family + "{gpu=\"0\",UUID=\""), std::string::npos)
        << family << "\n"
        << page;
  }
  // No Xid yet on the simulated GPU: dcgm-exporter's series for that.
  EXPECT_NE(page.find("DCGM_FI_DEV_XID_ERRORS{gpu=\"0\""), std::string::npos);
  EXPECT_TRUE(std::regex_search(page, std::regex("\nDCGM_FI_DEV_XID_ERRORS\\{gpu=\"0\",[^}]*,"
                                                 "err_code=\"0\",err_msg=\"No Error\"\\} 0\n")))
      << page;
  if (promtool().empty()) GTEST_SKIP() << "promtool is not installed";
  // promtool lints only what dcgm-exporter's own names break: counters without a lower-case
  // `_total`, "counter" in a name (PCIE_REPLAY_COUNTER), and its camelCase label modelName, which
  // the per-process series carry too (they have the GPU's labels).
  const auto [status, lines] = check_metrics(page);
  EXPECT_EQ(status, 3);
  const std::regex known(
      "DCGM_FI_[A-Z0-9_]+ (counter metrics should have \"_total\" suffix|metric name should not "
      "include type 'counter')|(DCGM_FI_[A-Z0-9_]+|gpuscope_process_[a-z_]+) label names should "
      "be written in 'snake_case' not 'camelCase'");
  for (const std::string& line : lines) EXPECT_TRUE(std::regex_match(line, known)) << line;
}

TEST(ServeExposition, PromtoolFindsNothingInGpuscopeNames) {
  if (promtool().empty()) GTEST_SKIP() << "promtool is not installed";
  TempDir dir;
  // With the health families on the page: their names and labels are linted too.
  const std::string page = scrape(
      dir, "gpuscope",
      {"\ngpuscope_dram_active_ratio{gpu=\"0\"", "\ngpuscope_gpu_pcie_replays_total{gpu=\"0\""});
  EXPECT_NE(page.find("\ngpuscope_gpu_xid_last{gpu=\"0\""), std::string::npos) << page;
  EXPECT_NE(page.find("\ngpuscope_gpu_ecc_errors_total{gpu=\"0\""), std::string::npos) << page;
  const auto [status, lines] = check_metrics(page);
  EXPECT_EQ(status, 0);
  for (const std::string& line : lines) ADD_FAILURE() << line;
}

// A node with both vendors: the AMD GPUs after the NVIDIA one, each series under its index, and
// the vendor on gpuscope_gpu_info (and dcgm-exporter's `device` label), promtool satisfied.
TEST(ServeExposition, AmdGpusBesideNvidiaOnes) {
  TempDir dir;
  const std::string scenario =
      std::string(GPUSCOPE_TEST_FIXTURE_SCENARIO_DIR) + "/mixed-h100-mi300x.json";
  const std::string page =
      scrape(dir, "gpuscope", {"\ngpuscope_energy_joules_total{gpu=\"2\""}, scenario);
  EXPECT_TRUE(std::regex_search(
      page, std::regex("\ngpuscope_gpu_info\\{gpu=\"2\",[^}]*name=\"AMD Instinct MI300X\""
                       "[^}]*vendor=\"amd\"\\} 1\n")))
      << page;
  EXPECT_TRUE(std::regex_search(
      page, std::regex("\ngpuscope_gpu_info\\{gpu=\"0\",[^}]*vendor=\"nvidia\"\\} 1\n")))
      << page;
  const std::string dcgm = scrape(dir, "dcgm", {"\nDCGM_FI_DEV_POWER_USAGE{gpu=\"1\""}, scenario);
  EXPECT_NE(dcgm.find("device=\"amd1\""), std::string::npos) << dcgm;
  if (promtool().empty()) GTEST_SKIP() << "promtool is not installed";
  const auto [status, lines] = check_metrics(page);
  EXPECT_EQ(status, 0);
  for (const std::string& line : lines) ADD_FAILURE() << line;
}

// --naming amd: AMD's Device Metrics Exporter's names, labels and units for the same values
// (energy in µJ, VRAM in MB), AMD's own columns among them, and nothing of gpuscope's.
TEST(ServeExposition, AmdNamingServesTheDeviceMetricsExportersNames) {
  TempDir dir;
  const std::string scenario =
      std::string(GPUSCOPE_TEST_FIXTURE_SCENARIO_DIR) + "/mixed-h100-mi300x.json";
  const std::string page = scrape(dir, "amd", {"\ngpu_umc_activity{gpu_id=\"2\""}, scenario);
  for (const char* family : {"gpu_power_usage", "gpu_energy_consumed", "gpu_gfx_activity",
                             "gpu_umc_activity", "gpu_mma_activity", "gpu_junction_temperature",
                             "gpu_memory_temperature", "gpu_used_vram", "gpu_free_vram"}) {
    EXPECT_NE(page.find(std::string("# TYPE ") + family + " gauge\n"), std::string::npos)
        << family << "\n"
        << page;
  }
  EXPECT_EQ(page.find("gpuscope_"), std::string::npos) << page;
  // The AMD GPU's labels; the NVIDIA GPU has no AMD-only series.
  EXPECT_TRUE(std::regex_search(
      page, std::regex("\ngpu_gfx_activity\\{gpu_id=\"1\",gpu_uuid=\"[^\"]+\",card_series=\"AMD "
                       "Instinct MI300X\",hostname=\"[^\"]+\"\\} [0-9.]+\n")))
      << page;
  EXPECT_EQ(page.find("gpu_umc_activity{gpu_id=\"0\""), std::string::npos) << page;
  // Units: VRAM in MB (used + free = the MI300X's 192 GiB = 196608 MB), energy in µJ.
  const auto value = [&page](const std::string& family) {
    std::smatch m;
    const bool found = std::regex_search(
        page, m, std::regex("\n" + family + "\\{gpu_id=\"1\"[^}]*\\} ([0-9.e+]+)\n"));
    return found ? std::stod(m[1]) : -1.0;
  };
  EXPECT_DOUBLE_EQ(value("gpu_used_vram") + value("gpu_free_vram"), 196608.0) << page;
  // The counter's whole mJ times 1000.
  const double micro_joules = value("gpu_energy_consumed");
  EXPECT_GT(micro_joules, 0) << page;
  EXPECT_EQ(std::fmod(micro_joules, 1000.0), 0.0) << micro_joules;
  if (promtool().empty()) GTEST_SKIP() << "promtool is not installed";
  const auto [status, lines] = check_metrics(page);
  EXPECT_EQ(status, 0);
  for (const std::string& line : lines) ADD_FAILURE() << line;
}

}  // namespace
}  // namespace gpuscope::testing
