// The node's energy through the binary (docs/node-energy.md): `profile --simulate` over a made-up
// sysfs and procfs (--sysfs-root, --proc-root) whose RAPL counters the job itself moves (two
// sockets, DRAM on one only, a package counter that wraps, a DRAM zone removed mid-run, a core zone
// that cannot be read), then what the run database holds and what `analyze` says. The expected
// joules are the counters' own movements, computed here from the values written.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "support/ports.hpp"
#include "support/process.hpp"
#include "support/scrape.hpp"
#include "support/sql.hpp"

namespace gpuscope::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr long long kRange = 100'000'000;  // package-0 wraps at 100 J

class NodeEnergy : public ::testing::Test {
 protected:
  TempDir dir_;
  std::string db_ = dir_.file("run.db");
  fs::path sys_ = fs::path(dir_.path()) / "sys";
  fs::path proc_ = fs::path(dir_.path()) / "proc";

  void write(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
  }
  void zone(const std::string& zone, const std::string& name, long long uj, long long max) {
    const auto folder = sys_ / "class/powercap" / zone;
    write(folder / "name", name + "\n");
    write(folder / "energy_uj", std::to_string(uj) + "\n");
    write(folder / "max_energy_range_uj", std::to_string(max) + "\n");
  }
  // Ticks of /proc/stat: busy (user) and idle.
  void proc_stat(long long busy, long long idle) {
    write(proc_ / "stat", "cpu  " + std::to_string(busy) + " 0 0 " + std::to_string(idle) +
                              " 0 0 0 0 0 0\ncpu0 1 0 0 1 0 0 0 0 0 0\n");
  }

  void SetUp() override {
    zone("intel-rapl:0", "package-0", 90'000'000, kRange);
    zone("intel-rapl:0:0", "dram", 5'000'000, 65'712'999'613LL);
    zone("intel-rapl:1", "package-1", 1'000'000'000, 262'143'328'850LL);
    zone("intel-rapl:1:0", "core", 1, 262'143'328'850LL);
    // The core zone's counter cannot be read (a folder where the file should be).
    fs::remove(sys_ / "class/powercap/intel-rapl:1:0/energy_uj");
    fs::create_directories(sys_ / "class/powercap/intel-rapl:1:0/energy_uj");
    write(proc_ / "self/cgroup", "0::/job.slice/job_1\n");
    write(sys_ / "fs/cgroup/job.slice/job_1/cpu.stat", "usage_usec 1000000\nuser_usec 1\n");
    proc_stat(10'000, 50'000);
  }

  // The job: the counters move in two steps 1.3 s apart (more than the 1 s cadence), the DRAM
  // zone goes after its last step was read, then the CPU times move.
  std::string job() const {
    const std::string pc = (sys_ / "class/powercap").string();
    const long hz = sysconf(_SC_CLK_TCK);
    return "w() { echo $2 > " + pc + "/$1/energy_uj; }; sleep 0.6; " +
           "w intel-rapl:0 99000000; w intel-rapl:1 1030000000; w intel-rapl:0:0 15000000; " +
           "sleep 1.3; w intel-rapl:0 40000000; w intel-rapl:1 1080000000; " +
           "w intel-rapl:0:0 25000000; sleep 1.3; rm -r " + pc + "/intel-rapl:0:0; " +
           "echo usage_usec 3000000 > " + (sys_ / "fs/cgroup/job.slice/job_1/cpu.stat").string() +
           "; printf 'cpu  " + std::to_string(10'000 + 8 * hz) + " 0 0 60000 0 0 0 0 0 0\\n' > " +
           (proc_ / "stat").string() + "; sleep 0.6";
  }

  ProcessResult profile() {
    return run_gpuscope({"profile", "--simulate", "h100", "-q", "--sysfs-root", sys_.string(),
                         "--proc-root", proc_.string(), "-o", db_, "--", "sh", "-c", job()});
  }
};

TEST_F(NodeEnergy, ProfileRecordsTheDomainsAndAnalyzeAddsThemUp) {
  const auto r = profile();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(number(db_, "SELECT COUNT(*) FROM node_energy_domains"), 4);
  EXPECT_EQ(number(db_, "SELECT additive FROM node_energy_domains WHERE name = 'dram'"), 1);
  EXPECT_EQ(number(db_, "SELECT additive FROM node_energy_domains WHERE name = 'core'"), 0);
  EXPECT_GE(number(db_, "SELECT COUNT(*) FROM node_energy_samples"), 6);
  // The unreadable core zone: said once as an event, no readings (never a zero).
  EXPECT_EQ(number(db_,
                   "SELECT COUNT(*) FROM events WHERE kind = 'node_energy' AND detail LIKE "
                   "'%core%'"),
            1);
  EXPECT_EQ(number(db_,
                   "SELECT COUNT(*) FROM node_energy_samples s JOIN node_energy_domains d "
                   "USING (run_id, domain) WHERE d.name = 'core'"),
            0);
  // The removed DRAM zone: said once, its readings stop.
  EXPECT_EQ(number(db_,
                   "SELECT COUNT(*) FROM events WHERE kind = 'node_energy' AND detail LIKE "
                   "'%gone%'"),
            1);
  EXPECT_EQ(number(db_, "SELECT COUNT(*) FROM node_cpu_time"), 2);

  const auto a = run_gpuscope({"analyze", db_, "-d", "none", "--json"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const json n = json::parse(a.out)["node_energy"];
  ASSERT_TRUE(n.is_object()) << a.out;
  // package-0: 90 → 99 J, then wrapped at 100 J to 40 J; package-1: 1000 → 1080 J.
  const double package0 = (99.0 - 90.0) + (kRange / 1e6 - 99.0) + 40.0;
  const double package1 = 1080.0 - 1000.0;
  const double dram = 25.0 - 5.0;
  EXPECT_NEAR(n["cpu_j"].get<double>(), package0 + package1, 1e-6);
  EXPECT_NEAR(n["dram_j"].get<double>(), dram, 1e-6);
  const double gpu = n["gpu_j"].get<double>();
  EXPECT_GT(gpu, 0);
  EXPECT_NEAR(n["total_j"].get<double>(), gpu + package0 + package1 + dram, 1e-6);
  EXPECT_EQ(n["cpu_dram_scope"], "node");
  // The job's cgroup used 2 s of CPU time while the node was busy for 8 s.
  EXPECT_NEAR(n["job_estimate"]["share"].get<double>(), 0.25, 1e-9);
  EXPECT_NEAR(n["job_estimate"]["cpu_dram_j"].get<double>(), 0.25 * (package0 + package1 + dram),
              1e-6);
  // Carbon on the total, at the world average the GPUs' carbon uses.
  const json analysis = json::parse(a.out);
  const double g_per_kwh = analysis["carbon"]["g_per_kwh"].get<double>();
  EXPECT_NEAR(
      n["total_carbon_g"].get<double>(),
      analysis["carbon"]["grams"].get<double>() + (package0 + package1 + dram) / 3.6e6 * g_per_kwh,
      1e-9);

  const auto text = run_gpuscope({"analyze", db_, "-d", "none"});
  EXPECT_NE(text.out.find("Node energy (GPU, CPU, memory)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("ESTIMATE"), std::string::npos) << text.out;
  const auto csv = run_gpuscope({"analyze", db_, "-d", "none", "--csv", "--aggregate", "node"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("scope,host,name,kind,role,joules,mean_power_w,carbon_g\n", 0), 0U);
  EXPECT_NE(csv.out.find("domain,"), std::string::npos);
}

TEST_F(NodeEnergy, AWrongSysfsRootIsRefusedBeforeTheJobStarts) {
  const auto r = run_gpuscope({"profile", "--simulate", "h100", "-q", "--sysfs-root",
                               dir_.file("nowhere"), "-o", db_, "--", "true"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--sysfs-root"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(db_)) << "refused before the run database was made";
}

TEST_F(NodeEnergy, ANodeWithoutRaplRecordsNoneAndAnalyzeSaysNothingOfIt) {
  fs::remove_all(sys_ / "class/powercap");
  const auto r = profile();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(number(db_, "SELECT COUNT(*) FROM node_energy_domains"), 0);
  const auto a = run_gpuscope({"analyze", db_, "--json"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_TRUE(json::parse(a.out)["node_energy"].is_null());
}

// The page `serve --sysfs-root` gives once `has` holds for it, or the last one after 60 s.
std::string serve_page_when(int port, const std::function<bool(const std::string&)>& has) {
  return metrics_when(port, has, std::chrono::seconds(60));
}

// serve exports each readable domain's energy since it started as a counter, with the labels that
// say what may be summed; an unreadable zone has no value; --no-node-energy has no such series.
TEST_F(NodeEnergy, ServeExportsTheDomainsEnergyCounters) {
  const int port = free_port();
  auto serve = start_gpuscope(
      {"serve", "--simulate", "h100", "--listen", "127.0.0.1:" + std::to_string(port), "--interval",
       "200", "--sysfs-root", sys_.string()},
      {{"GPUSCOPE_SIM_STATE", dir_.file("state.json")}}, dir_.file("serve.out"),
      dir_.file("serve.err"));
  auto line_of = [](const std::string& page, const std::string& zone) {
    const auto at = page.find("zone=\"" + zone + "\"");
    if (at == std::string::npos) return std::string();
    const auto start = page.rfind('\n', at) + 1;
    return page.substr(start, page.find('\n', at) - start);
  };
  auto value_of = [&](const std::string& page, const std::string& zone) {
    const std::string line = line_of(page, zone);
    return line.empty() ? std::nan("") : std::stod(line.substr(line.rfind(' ') + 1));
  };
  std::string page = serve_page_when(port, [&](const std::string& p) {
    return !std::isnan(value_of(p, "intel-rapl:0")) && !std::isnan(value_of(p, "intel-rapl:1"));
  });
  ASSERT_FALSE(std::isnan(value_of(page, "intel-rapl:0"))) << page;
  EXPECT_EQ(value_of(page, "intel-rapl:0"), 0.0);
  EXPECT_NE(line_of(page, "intel-rapl:0").find("kind=\"package\",socket=\"0\""), std::string::npos);
  EXPECT_NE(line_of(page, "intel-rapl:0:0").find("additive=\"true\""), std::string::npos);
  EXPECT_TRUE(line_of(page, "intel-rapl:1:0").empty()) << "the unreadable core zone has a value";
  EXPECT_NE(page.find("# TYPE gpuscope_node_energy_joules_total counter"), std::string::npos);

  // 2 J on package-0 and 9.5 J on package-1 (the same wrap rule as profile's: 90 J -> 2 J over a
  // 100 J range is 12 J).
  std::ofstream(sys_ / "class/powercap/intel-rapl:0/energy_uj") << "2000000\n";
  std::ofstream(sys_ / "class/powercap/intel-rapl:1/energy_uj") << "1009500000\n";
  page = serve_page_when(port, [&](const std::string& p) {
    return value_of(p, "intel-rapl:0") > 0 && value_of(p, "intel-rapl:1") > 0;
  });
  EXPECT_DOUBLE_EQ(value_of(page, "intel-rapl:0"), 12.0) << page;
  EXPECT_DOUBLE_EQ(value_of(page, "intel-rapl:1"), 9.5) << page;
  serve.reset();

  const int other = free_port();
  auto without = start_gpuscope(
      {"serve", "--simulate", "h100", "--listen", "127.0.0.1:" + std::to_string(other),
       "--interval", "200", "--sysfs-root", sys_.string(), "--no-node-energy"},
      {{"GPUSCOPE_SIM_STATE", dir_.file("state2.json")}}, dir_.file("serve2.out"),
      dir_.file("serve2.err"));
  page = serve_page_when(other, [](const std::string& p) {
    return p.find("gpuscope_power_watts") != std::string::npos;
  });
  EXPECT_NE(page.find("gpuscope_power_watts"), std::string::npos) << page;
  EXPECT_EQ(page.find("gpuscope_node_energy"), std::string::npos);
}

// monitor prints the node's CPU and memory power under the GPUs, from the counters' movement.
TEST_F(NodeEnergy, MonitorShowsTheNodesPower) {
  const std::string out = dir_.file("monitor.out");
  auto monitor = start_gpuscope(
      {"monitor", "--simulate", "h100", "-i", "200", "--sysfs-root", sys_.string()},
      {{"GPUSCOPE_SIM_STATE", dir_.file("state.json")}}, out, dir_.file("monitor.err"));
  auto text = [&] {
    std::ifstream in(out);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  // package-1 gains 30 J every 0.3 s while it runs: about 100 W.
  long long uj = 1'000'000'000;
  bool seen = false;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!seen && std::chrono::steady_clock::now() < end) {
    uj += 30'000'000;
    std::ofstream(sys_ / "class/powercap/intel-rapl:1/energy_uj") << uj << "\n";
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const std::string t = text();
    for (std::size_t at = t.find("package-1 "); at != std::string::npos;
         at = t.find("package-1 ", at + 1)) {
      const double watts = std::atof(t.c_str() + at + 10);
      if (watts > 50 && watts < 200) seen = true;
    }
  }
  monitor.reset();
  const std::string t = text();
  EXPECT_TRUE(seen) << t;
  EXPECT_NE(t.find("Node: CPU and memory"), std::string::npos) << t;
}

// This machine's own tree: the domains found and, as root, their readings; skipped where there is
// no RAPL (a VM, a container without /sys/class/powercap).
TEST(NodeEnergyReal, ThisMachinesTree) {
  if (!fs::exists("/sys/class/powercap/intel-rapl:0")) {
    GTEST_SKIP() << "this machine shows no RAPL zone under /sys/class/powercap";
  }
  TempDir dir;
  const auto db = dir.file("run.db");
  const auto r =
      run_gpuscope({"profile", "--simulate", "h100", "-q", "-o", db, "--", "sleep", "2.2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GE(number(db, "SELECT COUNT(*) FROM node_energy_domains"), 1);
  const bool refused = r.err.find("readable by root only") != std::string::npos;
  if (!refused) {
    EXPECT_GE(number(db, "SELECT COUNT(*) FROM node_energy_samples"), 2);
  }
}

}  // namespace
}  // namespace gpuscope::testing
