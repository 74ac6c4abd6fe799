// gpuscope's exporters against real servers on loopback: a real Prometheus scrapes
// `gpuscope serve`, a real VictoriaMetrics receives `--push` (also through an outage and with
// basic auth), and the values and timestamps they stored are compared with what the simulated
// GPUs produced. Skips (GTEST_SKIP) only when the server binaries are absent; setup.sh installs
// them. Nothing here depends on how fast anything starts: every wait polls for a condition.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "support/ports.hpp"
#include "support/process.hpp"
#include "support/programs.hpp"
#include "support/scrape.hpp"
#include "support/sql.hpp"

namespace gpuscope::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

const std::string kSteady = std::string(GPUSCOPE_TEST_FIXTURE_SCENARIO_DIR) + "/export-steady.json";

std::map<std::string, std::string> sim_env(const TempDir& dir) {
  return {{"GPUSCOPE_SIM_STATE", dir.file("sim-state.json")}};
}

// ---------------------------------------------------------------------------------------------
// Prometheus

json prometheus_query(int port, const std::string& query) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(10, 0);
  auto response =
      client.Get("/api/v1/query", httplib::Params{{"query", query}}, httplib::Headers{});
  if (!response || response->status != 200) return json();
  return json::parse(response->body)["data"]["result"];
}

// Two `serve` of one scenario, gpuscope's names and dcgm-exporter's, standing for nodes n1
// (--node-name) and n2 (GPUSCOPE_NODE_NAME), and a Prometheus scraping both every 500 ms;
// everything stops with this object.
struct ScrapedServes {
  int serve_port = free_port();
  int dcgm_port = free_port();
  int prometheus_port = free_port();
  std::unique_ptr<BackgroundProcess> serve, dcgm, prometheus;

  void start(const std::string& prometheus_binary, const std::string& scenario,
             const TempDir& dir) {
    const auto env = sim_env(dir);
    serve = start_gpuscope(
        {"serve", "--simulate", scenario, "--listen", "127.0.0.1:" + std::to_string(serve_port),
         "--interval", "200", "--node-name", "n1"},
        env, dir.file("serve.out"), dir.file("serve.err"));
    auto n2 = env;
    n2["GPUSCOPE_NODE_NAME"] = "n2";
    dcgm = start_gpuscope({"serve", "--simulate", scenario, "--naming", "dcgm", "--listen",
                           "127.0.0.1:" + std::to_string(dcgm_port), "--interval", "200"},
                          n2, dir.file("dcgm.out"), dir.file("dcgm.err"));
    ASSERT_TRUE(eventually([&] { return http_get(serve_port, "/metrics").has_value(); }))
        << read_file(dir.file("serve.err"));
    ASSERT_TRUE(eventually([&] { return http_get(dcgm_port, "/metrics").has_value(); }))
        << read_file(dir.file("dcgm.err"));
    std::ofstream(dir.file("prometheus.yml"))
        << "global:\n  scrape_interval: 500ms\n  scrape_timeout: 400ms\n"
        << "scrape_configs:\n"
        << "  - job_name: gpuscope\n    static_configs:\n      - targets: ['127.0.0.1:"
        << serve_port << "']\n"
        << "  - job_name: dcgm\n    static_configs:\n      - targets: ['127.0.0.1:" << dcgm_port
        << "']\n";
    prometheus = std::make_unique<BackgroundProcess>(
        std::vector<std::string>{
            prometheus_binary, "--config.file=" + dir.file("prometheus.yml"),
            "--storage.tsdb.path=" + dir.file("tsdb"),
            "--web.listen-address=127.0.0.1:" + std::to_string(prometheus_port)},
        std::map<std::string, std::string>{}, dir.file("prometheus.out"),
        dir.file("prometheus.err"));
  }
};

TEST(PrometheusTest, ScrapedValuesEqualWhatTheSimulatedGpusProduced) {
  const std::string prometheus = find_program("prometheus");
  if (prometheus.empty())
    GTEST_SKIP() << "prometheus is not installed (scripts/setup.sh installs it)";
  TempDir dir;
  ScrapedServes pair;
  ASSERT_NO_FATAL_FAILURE(pair.start(prometheus, kSteady, dir));
  const int serve_port = pair.serve_port;
  const int prometheus_port = pair.prometheus_port;
  auto env = sim_env(dir);
  // Wait until Prometheus holds a few scrapes of every series.
  ASSERT_TRUE(eventually([&] {
    const json r =
        prometheus_query(prometheus_port, "count_over_time(gpuscope_sm_active_ratio[1m])");
    return r.is_array() && r.size() == 2 && std::stod(r[0]["value"][1].get<std::string>()) >= 4 &&
           prometheus_query(prometheus_port, "DCGM_FI_DEV_GPU_UTIL").size() == 2;
  })) << read_file(dir.file("prometheus.err"));

  // What the simulated GPUs produce, read independently of the exporter.
  const ProcessResult once =
      run_gpuscope({"monitor", "--once", "--json", "--simulate", kSteady}, env);
  ASSERT_EQ(once.exit_code, 0) << once.err;
  const json gpus = json::parse(once.out)["gpus"];
  ASSERT_EQ(gpus.size(), 2u);

  // Constant levels of the scenario (no noise): every raw sample Prometheus stored equals them.
  const std::vector<std::tuple<std::string, std::string, double>> constant = {
      {"gpuscope_gpu_util_ratio", "gpu_util_pct", 0.01},
      {"gpuscope_mem_util_ratio", "mem_util_pct", 0.01},
      {"gpuscope_sm_active_ratio", "sm_active_pct", 0.01},
      {"gpuscope_sm_occupancy_ratio", "sm_occupancy_pct", 0.01},
      {"gpuscope_tensor_active_ratio", "tensor_active_pct", 0.01},
      {"gpuscope_dram_active_ratio", "dram_active_pct", 0.01},
      {"gpuscope_fp16_active_ratio", "fp16_active_pct", 0.01},
      {"gpuscope_memory_used_bytes", "memory_used_bytes", 1},
      {"gpuscope_power_limit_watts", "power_limit_w", 1},
      {"DCGM_FI_DEV_GPU_UTIL", "gpu_util_pct", 1},
      {"DCGM_FI_PROF_SM_ACTIVE", "sm_active_pct", 0.01},
      {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "tensor_active_pct", 0.01},
      {"DCGM_FI_DEV_FB_USED", "memory_used_bytes", 1.0 / (1024 * 1024)},
  };
  for (const auto& [name, field, scale] : constant) {
    const json series = prometheus_query(prometheus_port, name + "[1m]");
    ASSERT_EQ(series.size(), 2u) << name;
    for (const json& s : series) {
      const bool dcgm_names = name.rfind("DCGM", 0) == 0;
      const std::size_t gpu = std::stoul(s["metric"]["gpu"].get<std::string>());
      const std::string uuid = s["metric"][dcgm_names ? "UUID" : "uuid"];
      ASSERT_LT(gpu, 2u);
      EXPECT_EQ(uuid, gpus[gpu]["uuid"]) << name;
      EXPECT_EQ(s["metric"]["job"], dcgm_names ? "dcgm" : "gpuscope");
      EXPECT_EQ(s["metric"][dcgm_names ? "Hostname" : "hostname"], dcgm_names ? "n2" : "n1");
      const double expected = gpus[gpu][field].get<double>() * scale;
      ASSERT_GE(s["values"].size(), 2u) << name;
      // NVML's own values travel bit for bit; GPM ratios are computed by the driver from counter
      // differences over each window, so they may differ from one read to the next in the last
      // bits (61.00000000000001 vs 61).
      const bool gpm =
          field.find("active") != std::string::npos || field.find("occupancy") != std::string::npos;
      for (const json& point : s["values"]) {
        const double scraped = std::stod(point[1].get<std::string>());
        if (gpm) {
          EXPECT_NEAR(scraped, expected, 1e-12) << name << " GPU " << gpu << " at " << point[0];
        } else {
          EXPECT_EQ(scraped, expected) << name << " GPU " << gpu << " at " << point[0];
        }
      }
    }
  }
  // The energy counter only grows, and every GPU reports power near the scenario's level.
  for (const json& s : prometheus_query(prometheus_port, "gpuscope_energy_joules_total[1m]")) {
    double previous = 0;
    for (const json& point : s["values"]) {
      const double joules = std::stod(point[1].get<std::string>());
      EXPECT_GE(joules, previous);
      previous = joules;
    }
    EXPECT_GT(previous, 0);
  }
  for (const json& s : prometheus_query(prometheus_port, "gpuscope_power_watts")) {
    const std::size_t gpu = std::stoul(s["metric"]["gpu"].get<std::string>());
    EXPECT_NEAR(std::stod(s["value"][1].get<std::string>()), gpus[gpu]["power_w"].get<double>(),
                0.05 * gpus[gpu]["power_w"].get<double>());
  }
  // Every metric name on the /metrics page reached Prometheus.
  const std::string page = *http_get(serve_port, "/metrics");
  std::set<std::string> exposed;
  std::istringstream lines(page);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# TYPE ", 0) == 0) exposed.insert(line.substr(7, line.find(' ', 7) - 7));
  }
  EXPECT_GE(exposed.size(), 25u);
  // Each for both GPUs (a family with a label of its own, as the health families' `type`, has
  // several series per GPU).
  for (const std::string& name : exposed) {
    std::set<std::string> gpus_seen;
    for (const json& series : prometheus_query(prometheus_port, name)) {
      gpus_seen.insert(series["metric"]["gpu"].get<std::string>());
    }
    EXPECT_EQ(gpus_seen.size(), 2u) << name;
  }
}

// An A100 has no GPM: `serve` takes its saturation metrics from DCGM (the simulated libdcgm on
// an nv-hostengine), and Prometheus stores the scenario's constant levels under both namings.
TEST(PrometheusTest, DcgmSaturationMetricsOfAnA100ReachPrometheus) {
  const std::string prometheus = find_program("prometheus");
  if (prometheus.empty())
    GTEST_SKIP() << "prometheus is not installed (scripts/setup.sh installs it)";
  const std::string scenario =
      std::string(GPUSCOPE_TEST_FIXTURE_SCENARIO_DIR) + "/export-steady-a100-dcgm.json";
  TempDir dir;
  ScrapedServes pair;
  ASSERT_NO_FATAL_FAILURE(pair.start(prometheus, scenario, dir));
  const int prometheus_port = pair.prometheus_port;
  EXPECT_NE(read_file(dir.file("serve.err")).find("from DCGM (nv-hostengine at localhost:5555"),
            std::string::npos)
      << read_file(dir.file("serve.err"));
  ASSERT_TRUE(eventually([&] {
    const json r =
        prometheus_query(prometheus_port, "count_over_time(gpuscope_sm_active_ratio[1m])");
    const json d = prometheus_query(prometheus_port, "count_over_time(DCGM_FI_PROF_SM_ACTIVE[1m])");
    return r.is_array() && r.size() == 2 && std::stod(r[0]["value"][1].get<std::string>()) >= 4 &&
           d.is_array() && d.size() == 2 && std::stod(d[0]["value"][1].get<std::string>()) >= 4;
  })) << read_file(dir.file("prometheus.err"));
  // The scenario's levels (GPU 1 at half the activity), as ratios and bytes per second.
  const std::vector<std::pair<std::string, double>> expected = {
      {"gpuscope_sm_active_ratio", 0.61},
      {"gpuscope_sm_occupancy_ratio", 0.33},
      {"gpuscope_tensor_active_ratio", 0.47},
      {"gpuscope_dram_active_ratio", 0.38},
      {"gpuscope_fp16_active_ratio", 0.21},
      {"DCGM_FI_PROF_SM_ACTIVE", 0.61},
      {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", 0.47},
      {"DCGM_FI_PROF_DRAM_ACTIVE", 0.38},
      {"DCGM_FI_PROF_PCIE_RX_BYTES", 700.0 * 1024 * 1024},
  };
  for (const auto& [name, level] : expected) {
    const json series = prometheus_query(prometheus_port, name + "[1m]");
    ASSERT_EQ(series.size(), 2u) << name;
    for (const json& s : series) {
      const std::size_t gpu = std::stoul(s["metric"]["gpu"].get<std::string>());
      const double want = gpu == 0 ? level : level / 2;
      ASSERT_GE(s["values"].size(), 2u) << name;
      for (const json& point : s["values"]) {
        EXPECT_NEAR(std::stod(point[1].get<std::string>()), want, 1e-6 * want)
            << name << " GPU " << gpu << " at " << point[0];
      }
    }
  }
}

// `serve --naming jobstats`, as Princeton jobstats' GPU exporter: a process of SLURM job 4242
// holds GPU 0, and Prometheus stores the job id as nvidia_gpu_jobId's value and as the jobid
// label of GPU 0's series, the simulated GPUs' values in that exporter's units, and no job on
// GPU 1.
TEST(PrometheusTest, JobstatsNamingStoresTheGpusValuesAndTheirJob) {
  const std::string prometheus = find_program("prometheus");
  if (prometheus.empty())
    GTEST_SKIP() << "prometheus is not installed (scripts/setup.sh installs it)";
  TempDir dir;
  auto env = sim_env(dir);
  BackgroundProcess job({"sleep", "600"}, {{"SLURM_JOB_ID", "4242"}}, dir.file("job.out"),
                        dir.file("job.err"));
  std::ofstream(dir.file("processes.txt")) << "0 " << job.pid() << " 1024\n";
  auto serve_env = env;
  serve_env["GPUSCOPE_SIM_PROCESSES_FILE"] = dir.file("processes.txt");
  const int serve_port = free_port();
  const int prometheus_port = free_port();
  auto serve = start_gpuscope({"serve", "--simulate", kSteady, "--naming", "jobstats", "--listen",
                               "127.0.0.1:" + std::to_string(serve_port), "--interval", "200",
                               "--process-sampling-ms", "200"},
                              serve_env, dir.file("serve.out"), dir.file("serve.err"));
  ASSERT_TRUE(eventually([&] { return http_get(serve_port, "/metrics").has_value(); }))
      << read_file(dir.file("serve.err"));
  std::ofstream(dir.file("prometheus.yml"))
      << "global:\n  scrape_interval: 500ms\n  scrape_timeout: 400ms\n"
      << "scrape_configs:\n  - job_name: jobstats\n    static_configs:\n"
      << "      - targets: ['127.0.0.1:" << serve_port << "']\n";
  BackgroundProcess server({prometheus, "--config.file=" + dir.file("prometheus.yml"),
                            "--storage.tsdb.path=" + dir.file("tsdb"),
                            "--web.listen-address=127.0.0.1:" + std::to_string(prometheus_port)},
                           {}, dir.file("prometheus.out"), dir.file("prometheus.err"));
  ASSERT_TRUE(eventually([&] {
    const json r = prometheus_query(prometheus_port, "count_over_time(nvidia_gpu_jobId[1m])");
    const json d = prometheus_query(prometheus_port, "count_over_time(nvidia_gpu_duty_cycle[1m])");
    return r.is_array() && r.size() == 1 && std::stod(r[0]["value"][1].get<std::string>()) >= 4 &&
           d.is_array() && d.size() >= 2 && std::stod(d[0]["value"][1].get<std::string>()) >= 4;
  })) << read_file(dir.file("prometheus.err"))
      << *http_get(serve_port, "/metrics");

  const ProcessResult once =
      run_gpuscope({"monitor", "--once", "--json", "--simulate", kSteady}, env);
  ASSERT_EQ(once.exit_code, 0) << once.err;
  const json gpus = json::parse(once.out)["gpus"];
  ASSERT_EQ(gpus.size(), 2u);
  const json ids = prometheus_query(prometheus_port, "nvidia_gpu_jobId");
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(ids[0]["value"][1], "4242");
  EXPECT_EQ(ids[0]["metric"]["jobid"], "4242");
  EXPECT_EQ(ids[0]["metric"]["ordinal"], "0");
  EXPECT_EQ(ids[0]["metric"]["userid"], std::to_string(getuid()));
  EXPECT_EQ(prometheus_query(prometheus_port, "nvidia_gpu_jobUid")[0]["value"][1],
            std::to_string(getuid()));
  // Constant levels, in the exporter's units; the series of the job's GPU carry its id.
  const std::vector<std::tuple<std::string, std::string, double>> constant = {
      {"nvidia_gpu_duty_cycle", "gpu_util_pct", 1},
      {"nvidia_gpu_memory_used_bytes", "memory_used_bytes", 1},
      {"nvidia_gpu_memory_total_bytes", "memory_total_bytes", 1},
      {"nvidia_gpu_sm_util_percent", "sm_active_pct", 0.01},
      {"nvidia_gpu_any_tensor_util_percent", "tensor_active_pct", 0.01},
      {"nvidia_gpu_dram_bw_util_percent", "dram_active_pct", 0.01},
      {"nvidia_gpu_fp16_util_percent", "fp16_active_pct", 0.01},
  };
  for (const auto& [name, field, scale] : constant) {
    // The job's series start once the processes were looked at: earlier ones have no jobid.
    const json series = prometheus_query(prometheus_port, name + "[1m]");
    ASSERT_GE(series.size(), 2u) << name;
    std::set<std::string> jobs_on_gpu0;
    for (const json& s : series) {
      const std::size_t gpu = std::stoul(s["metric"]["ordinal"].get<std::string>());
      ASSERT_LT(gpu, 2u);
      EXPECT_EQ(s["metric"]["uuid"], gpus[gpu]["uuid"]) << name;
      EXPECT_EQ(s["metric"]["name"], gpus[gpu]["name"]) << name;
      EXPECT_EQ(s["metric"]["minor_number"], s["metric"]["ordinal"]) << name;
      EXPECT_FALSE(s["metric"].contains("hostname")) << name;
      if (gpu == 0) jobs_on_gpu0.insert(s["metric"].value("jobid", ""));
      if (gpu == 1) {
        EXPECT_FALSE(s["metric"].contains("jobid")) << name;
      }
      const double expected = gpus[gpu][field].get<double>() * scale;
      for (const json& point : s["values"]) {
        EXPECT_NEAR(std::stod(point[1].get<std::string>()), expected, 1e-12 * (1 + expected))
            << name << " GPU " << gpu << " at " << point[0];
      }
    }
    EXPECT_EQ(jobs_on_gpu0.count("4242"), 1u) << name;
  }
  for (const json& s : prometheus_query(prometheus_port, "nvidia_gpu_power_usage_milliwatts")) {
    const std::size_t gpu = std::stoul(s["metric"]["ordinal"].get<std::string>());
    const double mw = std::stod(s["value"][1].get<std::string>());
    EXPECT_EQ(mw, std::round(mw)) << "whole milliwatts";
    EXPECT_NEAR(mw, gpus[gpu]["power_w"].get<double>() * 1000,
                0.05 * gpus[gpu]["power_w"].get<double>() * 1000);
  }
  EXPECT_EQ(prometheus_query(prometheus_port, "nvidia_gpu_num_devices")[0]["value"][1], "2");
  EXPECT_TRUE(prometheus_query(prometheus_port, "{__name__=~\"gpuscope_.*\"}").empty());
}

// ---------------------------------------------------------------------------------------------
// VictoriaMetrics

class VictoriaMetrics {
 public:
  VictoriaMetrics(const TempDir& dir, std::vector<std::string> extra = {})
      : dir_(dir), port_(free_port()), extra_(std::move(extra)) {
    start();
  }
  // Starts the server on port_. The first start may find the port taken between free_port() and
  // the server's bind (another test of a parallel ctest): it then tries another port; a restart
  // keeps its port, which the pusher under test is aimed at.
  void start() {
    for (int attempt = 0;; ++attempt) {
      std::vector<std::string> argv = {
          find_program("victoria-metrics"), "-storageDataPath=" + dir_.file("vm-data"),
          "-httpListenAddr=127.0.0.1:" + std::to_string(port_), "-loggerLevel=ERROR"};
      argv.insert(argv.end(), extra_.begin(), extra_.end());
      std::filesystem::remove(dir_.file("vm.err"));
      process_ = std::make_unique<BackgroundProcess>(argv, std::map<std::string, std::string>{},
                                                     dir_.file("vm.out"), dir_.file("vm.err"));
      bool taken = false;
      const bool up = eventually([&] {
        taken = read_file(dir_.file("vm.err")).find("address already in use") != std::string::npos;
        if (taken) return true;
        httplib::Client client("127.0.0.1", port_);
        auto r = client.Get("/health");
        return r && (r->status == 200 || r->status == 401);  // 401: up, behind -httpAuth
      });
      if (taken && !started_ && attempt < 5) {
        process_->wait();
        port_ = free_port();
        continue;
      }
      EXPECT_TRUE(up && !taken) << read_file(dir_.file("vm.err"));
      started_ = true;
      return;
    }
  }
  void stop() {
    process_->signal(SIGTERM);
    process_->wait();
    process_.reset();
  }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Every stored gpuscope series: (name, gpu) → timestamp (ms) → value.
  std::map<std::pair<std::string, std::string>, std::map<std::int64_t, double>> export_all(
      const httplib::Headers& headers = {}) const {
    std::map<std::pair<std::string, std::string>, std::map<std::int64_t, double>> out;
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(30, 0);
    auto r = client.Post("/api/v1/export", headers, "match[]={__name__=~\"gpuscope_.*\"}",
                         "application/x-www-form-urlencoded");
    if (!r || r->status != 200) return out;
    std::istringstream lines(r->body);
    for (std::string line; std::getline(lines, line);) {
      if (line.empty()) continue;
      const json j = json::parse(line);
      auto& series = out[{j["metric"]["__name__"], j["metric"]["gpu"]}];
      for (std::size_t i = 0; i < j["timestamps"].size(); ++i) {
        series[j["timestamps"][i].get<std::int64_t>()] = j["values"][i].get<double>();
      }
    }
    return out;
  }

 private:
  const TempDir& dir_;
  int port_;
  bool started_ = false;
  std::vector<std::string> extra_;
  std::unique_ptr<BackgroundProcess> process_;
};

// What the run database says each pushed series must hold.
struct Expected {
  std::string column;
  std::string name;
  double scale;
};
const std::vector<Expected> kPushed = {
    {"power_w", "gpuscope_power_watts", 1},
    {"energy_mj", "gpuscope_energy_joules_total", 1e-3},
    {"gpu_util_pct", "gpuscope_gpu_util_ratio", 0.01},
    {"sm_active_pct", "gpuscope_sm_active_ratio", 0.01},
    {"tensor_active_pct", "gpuscope_tensor_active_ratio", 0.01},
    {"temperature_c", "gpuscope_temperature_celsius", 1},
    {"memory_used_bytes", "gpuscope_memory_used_bytes", 1},
    {"sm_clock_mhz", "gpuscope_sm_clock_hertz", 1e6},
    {"clock_event_reasons", "gpuscope_clock_event_reasons", 1},
};

// Compares every value and timestamp of the database's samples with what VictoriaMetrics stored;
// returns the number of values compared.
std::size_t compare_with_database(const std::string& db, const VictoriaMetrics& vm) {
  const auto stored = vm.export_all();
  std::size_t compared = 0;
  for (const Expected& e : kPushed) {
    const auto rows = query(db, "SELECT device_index, wall_ns, " + e.column +
                                    " FROM samples WHERE " + e.column + " IS NOT NULL");
    EXPECT_FALSE(rows.empty()) << e.column;
    std::map<std::string, std::size_t> per_gpu;
    for (const SqlRow& row : rows) {
      const std::string gpu = *row[0];
      const std::int64_t ms = std::stoll(*row[1]) / 1'000'000;
      const double value = std::stod(*row[2]) * e.scale;
      ++per_gpu[gpu];
      const auto series = stored.find({e.name, gpu});
      if (series == stored.end()) {
        ADD_FAILURE() << e.name << " GPU " << gpu << " missing";
        return compared;
      }
      const auto point = series->second.find(ms);
      if (point == series->second.end()) {
        ADD_FAILURE() << e.name << " GPU " << gpu << " has no sample at " << ms;
        continue;
      }
      EXPECT_NEAR(point->second, value, 1e-9 * std::max(1.0, std::abs(value)))
          << e.name << " GPU " << gpu << " at " << ms;
      ++compared;
    }
    for (const auto& [gpu, count] : per_gpu) {
      EXPECT_EQ(stored.at({e.name, gpu}).size(), count)
          << e.name << " GPU " << gpu << ": extra samples";
    }
  }
  return compared;
}

std::size_t stored_points(const VictoriaMetrics& vm, const std::string& name) {
  std::size_t n = 0;
  for (const auto& [key, points] : vm.export_all()) {
    if (key.first == name) n += points.size();
  }
  return n;
}

TEST(VictoriaMetricsTest, ReceivesEveryPushedValueAndTimestamp) {
  if (find_program("victoria-metrics").empty()) GTEST_SKIP() << "victoria-metrics is not installed";
  TempDir dir;
  VictoriaMetrics vm(dir);
  auto env = sim_env(dir);
  env["GPUSCOPE_SIM_TIME_SCALE"] = "10";
  const ProcessResult run =
      run_gpuscope({"profile", "--simulate", "h100x4-straggler", "-q", "-o", dir.file("run.db"),
                    "-s", "100", "--push", vm.url(), "--push-batch-ms", "200", "--", "sleep", "2"},
                   env);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err.find("push:"), std::string::npos) << run.err;
  const double rows =
      number(dir.file("run.db"), "SELECT count(*) FROM samples WHERE power_w IS NOT NULL");
  ASSERT_GT(rows, 40);
  // VictoriaMetrics makes rows searchable within a second or two of taking them.
  ASSERT_TRUE(eventually([&] {
    return static_cast<double>(stored_points(vm, "gpuscope_power_watts")) >= rows;
  })) << read_file(dir.file("vm.err"));
  EXPECT_GT(compare_with_database(dir.file("run.db"), vm), 9 * 40u);
  // The labels: gpu, uuid, hostname.
  httplib::Client client("127.0.0.1", vm.port());
  auto r = client.Post("/api/v1/export", "match[]=gpuscope_power_watts{gpu=\"3\"}",
                       "application/x-www-form-urlencoded");
  ASSERT_TRUE(r);
  const json series = json::parse(r->body.substr(0, r->body.find('\n')));
  EXPECT_EQ(series["metric"]["uuid"].get<std::string>().rfind("GPU-", 0), 0u);
  EXPECT_FALSE(series["metric"]["hostname"].get<std::string>().empty());
}

TEST(VictoriaMetricsTest, NothingIsLostWhileTheServerIsDown) {
  if (find_program("victoria-metrics").empty()) GTEST_SKIP() << "victoria-metrics is not installed";
  TempDir dir;
  VictoriaMetrics vm(dir);
  auto env = sim_env(dir);
  env["GPUSCOPE_SIM_TIME_SCALE"] = "10";
  const std::string done = dir.file("done");
  // The job runs until the test says so, so the outage happens in the middle of it.
  auto profile =
      start_gpuscope({"profile", "--simulate", "h100x4-straggler", "-q", "-o", dir.file("run.db"),
                      "-s", "100", "--push", vm.url(), "--push-batch-ms", "200",
                      "--push-retry-max-ms", "300", "--push-spill-dir", dir.file("spill"), "--wrap",
                      "while [ ! -e " + done + " ]; do sleep 0.1; done"},
                     env, dir.file("profile.out"), dir.file("profile.err"));
  ASSERT_TRUE(eventually([&] { return stored_points(vm, "gpuscope_power_watts") > 0; }))
      << read_file(dir.file("profile.err"));
  vm.stop();
  // Down until the pusher has noticed and buffered a few batches (its message says so).
  ASSERT_TRUE(eventually([&] {
    return read_file(dir.file("profile.err")).find("cannot deliver") != std::string::npos;
  }));
  std::this_thread::sleep_for(2s);
  vm.start();
  ASSERT_TRUE(eventually([&] {
    return read_file(dir.file("profile.err")).find("takes samples again") != std::string::npos;
  })) << read_file(dir.file("profile.err"));
  std::ofstream(done) << "1";
  ASSERT_EQ(profile->wait(), 0) << read_file(dir.file("profile.err"));
  const double rows =
      number(dir.file("run.db"), "SELECT count(*) FROM samples WHERE power_w IS NOT NULL");
  ASSERT_TRUE(eventually(
      [&] { return static_cast<double>(stored_points(vm, "gpuscope_power_watts")) >= rows; }));
  EXPECT_GT(compare_with_database(dir.file("run.db"), vm), 9 * 40u);
  EXPECT_EQ(read_file(dir.file("profile.err")).find("could not be delivered"), std::string::npos);
}

TEST(VictoriaMetricsTest, BasicAuthRightAndWrong) {
  if (find_program("victoria-metrics").empty()) GTEST_SKIP() << "victoria-metrics is not installed";
  TempDir dir;
  VictoriaMetrics vm(dir, {"-httpAuth.username=gpu", "-httpAuth.password=right-pw"});
  auto env = sim_env(dir);
  env["GPUSCOPE_PUSH_USER"] = "gpu";
  env["GPUSCOPE_PUSH_PASSWORD"] = "wrong-pw";
  const ProcessResult wrong =
      run_gpuscope({"profile", "--simulate", "h100", "-q", "-o", dir.file("wrong.db"), "--push",
                    vm.url(), "--push-batch-ms", "100", "--", "sh", "-c", "sleep 1; exit 3"},
                   env);
  EXPECT_EQ(wrong.exit_code, 3) << wrong.err;  // the job's status, whatever the push did
  EXPECT_NE(wrong.err.find("HTTP 401"), std::string::npos) << wrong.err;
  EXPECT_NE(wrong.err.find("basic auth as gpu"), std::string::npos) << wrong.err;
  EXPECT_EQ(wrong.err.find("wrong-pw"), std::string::npos) << "a secret was printed";
  EXPECT_NE(wrong.err.find("could not be delivered"), std::string::npos) << wrong.err;
  EXPECT_GT(number(dir.file("wrong.db"), "SELECT count(*) FROM samples"), 0);

  std::ofstream(dir.file("auth")) << "basic gpu:right-pw\n";
  env.erase("GPUSCOPE_PUSH_USER");
  env.erase("GPUSCOPE_PUSH_PASSWORD");
  const ProcessResult right = run_gpuscope(
      {"profile", "--simulate", "h100", "-q", "-o", dir.file("right.db"), "--push", vm.url(),
       "--push-auth-file", dir.file("auth"), "--push-batch-ms", "100", "--", "sleep", "1"},
      env);
  ASSERT_EQ(right.exit_code, 0) << right.err;
  EXPECT_EQ(right.err.find("push:"), std::string::npos) << right.err;
}

// ---------------------------------------------------------------------------------------------
// Bad input: said clearly, and never the job's problem.

TEST(ExporterErrorsTest, UnreachablePushUrlLeavesTheJobAlone) {
  TempDir dir;
  const ProcessResult run =
      run_gpuscope({"profile", "--simulate", "h100", "-q", "-o", dir.file("run.db"), "--push",
                    "http://127.0.0.1:" + std::to_string(free_port()), "--push-batch-ms", "100",
                    "--", "sh", "-c", "exit 7"},
                   sim_env(dir));
  EXPECT_EQ(run.exit_code, 7) << run.err;
  EXPECT_NE(run.err.find("cannot deliver to http://127.0.0.1:"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("could not be delivered"), std::string::npos) << run.err;
  EXPECT_GT(number(dir.file("run.db"), "SELECT count(*) FROM samples"), 0);
}

TEST(ExporterErrorsTest, MalformedPushUrlIsAUsageErrorBeforeTheJobStarts) {
  TempDir dir;
  const std::string marker = dir.file("ran");
  const ProcessResult run = run_gpuscope({"profile", "--simulate", "h100", "-o", dir.file("run.db"),
                                          "--push", "localhost 8428", "--", "touch", marker},
                                         sim_env(dir));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("gpuscope: error: --push 'localhost 8428' is not a URL"),
            std::string::npos)
      << run.err;
  EXPECT_NE(access(marker.c_str(), F_OK), 0) << "the job ran";
  EXPECT_NE(access(dir.file("run.db").c_str(), F_OK), 0) << "a database was written";
}

TEST(ExporterErrorsTest, PortInUseIsSaid) {
  TempDir dir;
  const int port = free_port();
  auto first = start_gpuscope(
      {"serve", "--simulate", kSteady, "--listen", "127.0.0.1:" + std::to_string(port)},
      sim_env(dir), dir.file("1.out"), dir.file("1.err"));
  ASSERT_TRUE(eventually([&] { return http_get(port, "/metrics").has_value(); }));
  const ProcessResult second = run_gpuscope(
      {"serve", "--simulate", kSteady, "--listen", "127.0.0.1:" + std::to_string(port)},
      sim_env(dir));
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_NE(second.err.find("cannot listen on 127.0.0.1:" + std::to_string(port) +
                            " (the port is in use by another program)"),
            std::string::npos)
      << second.err;
  first->signal(SIGTERM);
  EXPECT_EQ(first->wait(), 0);
  EXPECT_NE(read_file(dir.file("1.err")).find("serving 2 GPUs at http://127.0.0.1:"),
            std::string::npos);
}

// In a Kubernetes pod the host name is the pod's: the hostname label is the node's, from the
// downward API's NODE_NAME (deploy/kubernetes/exporter/daemonset.yaml); outside a pod NODE_NAME
// is just a variable and the host's own name stays.
TEST(ExporterLabelsTest, TheNodeNameOfAPodIsTheHostnameLabel) {
  TempDir dir;
  for (const bool in_pod : {true, false}) {
    const int port = free_port();
    auto env = sim_env(dir);
    env["NODE_NAME"] = "gpu-node-17";
    env["HOSTNAME"] = "gpuscope-exporter-x2k4p";
    if (in_pod) env["KUBERNETES_SERVICE_HOST"] = "10.96.0.1";
    auto serve = start_gpuscope(
        {"serve", "--simulate", kSteady, "--listen", "127.0.0.1:" + std::to_string(port)}, env,
        dir.file("serve.out"), dir.file("serve.err"));
    std::optional<std::string> page;
    ASSERT_TRUE(eventually([&] { return (page = http_get(port, "/metrics")).has_value(); }))
        << read_file(dir.file("serve.err"));
    const bool labelled = page->find("hostname=\"gpu-node-17\"") != std::string::npos;
    EXPECT_EQ(labelled, in_pod) << (in_pod ? "in a pod" : "outside a pod") << "\n"
                                << page->substr(0, 2000);
    EXPECT_EQ(page->find("gpuscope-exporter-x2k4p"), std::string::npos);
    serve->signal(SIGTERM);
    EXPECT_EQ(serve->wait(), 0);
  }
}

// The shared libraries a running process has mapped, by file name (from /proc/PID/maps).
std::set<std::string> mapped_libraries(int pid) {
  std::set<std::string> names;
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  for (std::string line; std::getline(maps, line);) {
    const auto slash = line.rfind('/');
    if (slash != std::string::npos && line.find(".so", slash) != std::string::npos) {
      names.insert(line.substr(slash + 1));
    }
  }
  return names;
}

bool maps_any(const std::set<std::string>& names, const std::string& prefix) {
  for (const auto& name : names) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// The exporter's memory goal (docs/live.md): serving /metrics loads no TLS stack; libcurl,
// and the OpenSSL and GnuTLS it brings, are loaded only when a push is asked for.
TEST(ExporterMemoryTest, TlsLibrariesAreLoadedOnlyForPush) {
  TempDir dir;
  const int port = free_port();
  auto plain = start_gpuscope(
      {"serve", "--simulate", kSteady, "--listen", "127.0.0.1:" + std::to_string(port)},
      sim_env(dir), dir.file("plain.out"), dir.file("plain.err"));
  ASSERT_TRUE(eventually([&] { return http_get(port, "/metrics").has_value(); }))
      << read_file(dir.file("plain.err"));
  const auto served = mapped_libraries(plain->pid());
  ASSERT_TRUE(maps_any(served, "libsqlite3")) << "the maps were not read";
  // Nor what --web-config brings: yaml-cpp, libevent's OpenSSL bufferevents, libxcrypt.
  for (const char* library :
       {"libcurl", "libssl", "libcrypto", "libgnutls", "libkrb5", "libyaml-cpp",
        "libgpuscope_webconfig", "libevent_openssl", "libcrypt."}) {
    EXPECT_FALSE(maps_any(served, library))
        << library << " is loaded by serve without --push or --web-config";
  }
  plain->signal(SIGTERM);
  EXPECT_EQ(plain->wait(), 0);

  // Pushing to a port nobody listens on: the samples wait in the buffer, serve keeps serving.
  const int push_port = free_port();
  const int port2 = free_port();
  auto pushing = start_gpuscope(
      {"serve", "--simulate", kSteady, "--listen", "127.0.0.1:" + std::to_string(port2), "--push",
       "http://127.0.0.1:" + std::to_string(push_port), "--push-spill-dir", dir.file("spill")},
      sim_env(dir), dir.file("push.out"), dir.file("push.err"));
  ASSERT_TRUE(eventually([&] { return http_get(port2, "/metrics").has_value(); }))
      << read_file(dir.file("push.err"));
  EXPECT_TRUE(maps_any(mapped_libraries(pushing->pid()), "libcurl"));

  // Stopped while the server never answered: serve's samples exist nowhere else, so what it
  // could not deliver is saved, and it says where and how to send it.
  pushing->signal(SIGTERM);
  EXPECT_EQ(pushing->wait(), 0);
  const std::string err = read_file(dir.file("push.err"));
  const auto at = err.find("they are saved in ");
  ASSERT_NE(at, std::string::npos) << err;
  const auto begin = at + std::string("they are saved in ").size();
  const std::string file = err.substr(begin, err.find(':', begin) - begin);
  EXPECT_EQ(file.rfind(dir.file("spill") + "/undelivered-", 0), 0U) << file;
  const std::string saved = read_file(file);
  EXPECT_NE(saved.find("gpuscope_power_watts{"), std::string::npos) << saved.substr(0, 300);
  EXPECT_NE(err.find("curl --data-binary @" + file + " http://127.0.0.1:" +
                     std::to_string(push_port) + "/api/v1/import/prometheus"),
            std::string::npos)
      << err;
}

// ---------------------------------------------------------------------------------------------
// The exporter under hostile clients: raw sockets on loopback, bounded.

int connect_to(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Reads from fd until `done(received)` or the peer closes or 10 s pass without data.
std::string read_until(int fd, const std::function<bool(const std::string&)>& done) {
  std::string received;
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  char buffer[65536];
  while (!done(received)) {
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    received.append(buffer, static_cast<std::size_t>(n));
  }
  return received;
}

long rss_kb(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

struct ServeFixture {
  TempDir dir;
  int port = free_port();
  std::unique_ptr<BackgroundProcess> serve;
  explicit ServeFixture(std::vector<std::string> prefix = {}) {
    std::vector<std::string> argv = std::move(prefix);
    argv.insert(argv.end(), {GPUSCOPE_TEST_BINARY, "serve", "--simulate", kSteady, "--listen",
                             "127.0.0.1:" + std::to_string(port)});
    serve =
        std::make_unique<BackgroundProcess>(argv, sim_env(dir), dir.file("out"), dir.file("err"));
  }
  bool up() const {
    return eventually([&] { return http_get(port, "/metrics").has_value(); });
  }
};

TEST(ExporterHardeningTest, HeadSendsNoBodySoKeepAliveStaysReadable) {
  ServeFixture server;
  ASSERT_TRUE(server.up()) << read_file(server.dir.file("err"));
  const int fd = connect_to(server.port);
  ASSERT_GE(fd, 0);
  const std::string requests =
      "HEAD /metrics HTTP/1.1\r\nHost: t\r\n\r\nGET /healthz HTTP/1.1\r\nHost: t\r\n\r\n";
  ASSERT_EQ(send(fd, requests.data(), requests.size(), 0), static_cast<ssize_t>(requests.size()));
  const std::string received = read_until(
      fd, [](const std::string& r) { return r.find("\r\n\r\nok\n") != std::string::npos; });
  close(fd);
  // The HEAD response: headers (with the GET's Content-Length), then at once the next response.
  const auto head_end = received.find("\r\n\r\n");
  ASSERT_NE(head_end, std::string::npos) << received;
  const std::string head = received.substr(0, head_end);
  EXPECT_EQ(head.rfind("HTTP/1.1 200", 0), 0U) << head;
  EXPECT_NE(head.find("Content-Length: "), std::string::npos) << head;
  EXPECT_EQ(received.find("HTTP/1.1 200", head_end), head_end + 4) << received.substr(0, 800);
  EXPECT_EQ(received.substr(received.size() - 3), "ok\n");
  server.serve->signal(SIGTERM);
  EXPECT_EQ(server.serve->wait(), 0);
}

TEST(ExporterHardeningTest, EndlessHeadersAreCutAndHoldNoMemory) {
  ServeFixture server;
  ASSERT_TRUE(server.up()) << read_file(server.dir.file("err"));
  const long before_kb = rss_kb(server.serve->pid());
  const int fd = connect_to(server.port);
  ASSERT_GE(fd, 0);
  signal(SIGPIPE, SIG_IGN);
  std::string request = "GET /metrics HTTP/1.1\r\nHost: t\r\n";
  ASSERT_GT(send(fd, request.data(), request.size(), 0), 0);
  const std::string header = "X-Junk: " + std::string(1000, 'a') + "\r\n";
  std::size_t sent = 0;
  for (int i = 0; i < 20000; ++i) {  // 20 MB offered at most
    const ssize_t n = send(fd, header.data(), header.size(), MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  const std::string answer =
      read_until(fd, [](const std::string& r) { return r.find("\r\n\r\n") != std::string::npos; });
  close(fd);
  EXPECT_LT(sent, std::size_t{20000} * header.size()) << "the server read every header";
  if (!answer.empty()) {
    EXPECT_EQ(answer.rfind("HTTP/1.1 4", 0), 0U) << answer.substr(0, 200);
  }
  EXPECT_TRUE(http_get(server.port, "/metrics").has_value());
  const long after_kb = rss_kb(server.serve->pid());
  EXPECT_LT(after_kb, before_kb + 16 * 1024) << before_kb << " kB -> " << after_kb << " kB";
  server.serve->signal(SIGTERM);
  EXPECT_EQ(server.serve->wait(), 0);
}

TEST(ExporterHardeningTest, AtTheDescriptorLimitItPausesLogsLittleAndRecovers) {
  if (find_program("prlimit").empty()) GTEST_SKIP() << "prlimit (util-linux) is not installed";
  ServeFixture server({find_program("prlimit"), "--nofile=40:40"});
  ASSERT_TRUE(server.up()) << read_file(server.dir.file("err"));
  std::vector<int> held;
  for (int i = 0; i < 100; ++i) {
    const int fd = connect_to(server.port);  // the kernel's backlog accepts them all
    if (fd < 0) break;
    held.push_back(fd);
  }
  const auto said = [&] {
    return read_file(server.dir.file("err")).find("cannot accept a connection") !=
           std::string::npos;
  };
  EXPECT_TRUE(eventually(said, 30s)) << read_file(server.dir.file("err"));
  std::this_thread::sleep_for(2s);  // a flood would be a million lines by now
  for (const int fd : held) close(fd);
  EXPECT_TRUE(eventually([&] { return http_get(server.port, "/metrics").has_value(); }, 30s));
  server.serve->signal(SIGTERM);
  EXPECT_EQ(server.serve->wait(), 0);
  const std::string err = read_file(server.dir.file("err"));
  const auto lines = std::count(err.begin(), err.end(), '\n');
  EXPECT_LE(lines, 20) << err.substr(0, 2000);
  EXPECT_EQ(err.find("[warn]"), std::string::npos) << "libevent's own log reached stderr";
}

TEST(ExporterErrorsTest, MalformedListenAddressIsAUsageError) {
  const ProcessResult run =
      run_gpuscope({"serve", "--simulate", kSteady, "--listen", "localhost:http"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("is not an address to listen on"), std::string::npos) << run.err;
}

TEST(MonitorTest, OnceTextHasAHeaderAndARowPerGpu) {
  TempDir dir;
  const ProcessResult run =
      run_gpuscope({"monitor", "--once", "--simulate", kSteady}, sim_env(dir));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::istringstream lines(run.out);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(line);
  ASSERT_EQ(rows.size(), 3u) << run.out;
  EXPECT_NE(rows[0].find("throttle"), std::string::npos);
  EXPECT_EQ(rows[1].rfind("0 ", 0), 0u);
  EXPECT_NE(rows[1].find("87%"), std::string::npos) << rows[1];  // the scenario's util
  EXPECT_NE(rows[1].find("61%"), std::string::npos) << rows[1];  // its SM active (GPM)
  EXPECT_NE(rows[1].find("24.0 / 80 GiB"), std::string::npos) << rows[1];
  EXPECT_EQ(rows[2].rfind("1 ", 0), 0u);
}

TEST(ProfileLiveTest, ShowsTheTableOnStderrAndStillRecords) {
  TempDir dir;
  const ProcessResult run = run_gpuscope(
      {"profile", "--live", "--simulate", kSteady, "-o", dir.file("run.db"), "--", "sleep", "1.5"},
      sim_env(dir));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("power / cap"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("samples → "), run.err.rfind("samples → ")) << "one summary line";
  EXPECT_GT(number(dir.file("run.db"), "SELECT count(*) FROM samples"), 4);
}

}  // namespace
}  // namespace gpuscope::testing
