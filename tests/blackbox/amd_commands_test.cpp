// Every command on both simulated AMD nodes (MI300X, MI250X) and on a node with both vendors:
// profile, analyze, report, monitor, serve and sweep, through the binary.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/ports.hpp"
#include "support/process.hpp"
#include "support/scrape.hpp"
#include "support/sql.hpp"

namespace gpuscope::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

struct AmdNode {
  std::string scenario;  // a shipped name or a fixture file
  unsigned first_amd;    // the first AMD GPU's index
  unsigned amd_gpus;
};

std::ostream& operator<<(std::ostream& out, const AmdNode& node) {
  return out << std::filesystem::path(node.scenario).stem().string();
}

class AmdCommands : public ::testing::TestWithParam<AmdNode> {
 protected:
  TempDir dir_;
  std::string db_ = dir_.file("run.db");
  std::map<std::string, std::string> env_ = simulated_node_env(dir_.file("state.json"));
  const AmdNode& node() const { return GetParam(); }

  // The /metrics page of `serve` once it shows an AMD GPU (or what it last showed after 60 s).
  std::string scrape_serve() {
    const int port = free_port();
    auto serve = start_gpuscope({"serve", "--simulate", node().scenario, "--listen",
                                 "127.0.0.1:" + std::to_string(port), "--interval", "200"},
                                env_, dir_.file("serve.out"), dir_.file("serve.err"));
    return metrics_when(
        port,
        [](const std::string& page) {
          return page.find("gpuscope_umc_activity_ratio{") != std::string::npos;
        },
        60s);
  }
};

TEST_P(AmdCommands, EveryCommandWorksOnTheNode) {
  // profile, then analyze and report of what it stored.
  auto r = run_gpuscope(
      {"profile", "--simulate", node().scenario, "-q", "-o", db_, "-s", "50", "--", "sleep", "0.5"},
      env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(number(db_, "SELECT count(*) FROM devices WHERE vendor = 'amd'"), node().amd_gpus);
  auto a = run_gpuscope({"analyze", "--json", db_}, env_);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const json analysis = json::parse(a.out);
  unsigned amd = 0;
  for (const auto& gpu : analysis["gpus"]) amd += gpu["vendor"] == "amd" ? 1U : 0U;
  EXPECT_EQ(amd, node().amd_gpus);
  auto report = run_gpuscope({"report", db_, "-o", dir_.file("r.html")}, env_);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const unsigned gpus = static_cast<unsigned>(analysis["gpus"].size());
  EXPECT_NE(report.err.find(std::to_string(gpus) + " GPUs)"), std::string::npos) << report.err;
  EXPECT_GT(std::filesystem::file_size(dir_.file("r.html")), 10000U);

  // monitor and serve on the live node.
  auto monitor = run_gpuscope({"monitor", "--simulate", node().scenario, "--once", "--json"}, env_);
  ASSERT_EQ(monitor.exit_code, 0) << monitor.err;
  EXPECT_NE(monitor.out.find("AMD Instinct MI"), std::string::npos) << monitor.out;
  const std::string page = scrape_serve();
  EXPECT_NE(page.find("gpuscope_gpu_info{gpu=\"" + std::to_string(node().first_amd) + "\""),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("vendor=\"amd\""), std::string::npos) << page;

  // sweep: the first AMD GPU at the middle of its cap range, then the cap as it was.
  auto devices = run_gpuscope({"devices", "--simulate", node().scenario, "--json"}, env_);
  ASSERT_EQ(devices.exit_code, 0) << devices.err;
  const json cap = json::parse(devices.out)["amd"]["devices"][0]["power_limit_w"];
  const double middle = std::round((cap["min"].get<double>() + cap["max"].get<double>()) / 2);
  auto sweep =
      run_gpuscope({"sweep", "--simulate", node().scenario, "-o", dir_.file("sweep.db"), "--settle",
                    "0", "-s", "50", "--gpus", std::to_string(node().first_amd), "--power-limits",
                    std::to_string(static_cast<int>(middle)), "--", "sleep", "0.2"},
                   env_);
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  EXPECT_NE(sweep.err.find("restored: power limit " +
                           std::to_string(static_cast<int>(cap["current"].get<double>())) + " W"),
            std::string::npos)
      << sweep.err;
}

// The test's name for a node: the scenario's file name, as a C identifier.
std::string node_name(const ::testing::TestParamInfo<AmdNode>& param) {
  std::string name = std::filesystem::path(param.param.scenario).stem().string();
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Nodes, AmdCommands,
                         ::testing::Values(AmdNode{"mi300x", 0, 8}, AmdNode{"mi250x", 0, 8},
                                           AmdNode{std::string(GPUSCOPE_TEST_FIXTURE_SCENARIO_DIR) +
                                                       "/mixed-h100-mi300x.json",
                                                   1, 2}),
                         node_name);

}  // namespace
}  // namespace gpuscope::testing
