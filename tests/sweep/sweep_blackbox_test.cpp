// `gpuscope sweep` through the binary on a simulated H100 whose compute phase lasts the whole
// test, with a cooperating workload (sweep_workload.cpp) that runs as long as the capped (or
// clock-locked) GPU would. The simulated driver keeps power limits and locked clocks in a state
// file shared by every process, which is also how these tests read the setting in force.
#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "support/process.hpp"
#include "support/sql.hpp"

namespace gpuscope::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const std::string kScenario = std::string(GPUSCOPE_TEST_FIXTURE_SCENARIO_DIR) + "/sweep-h100.json";

class Sweep : public ::testing::Test {
 protected:
  TempDir dir_;
  std::string db_ = dir_.file("sweep.db");
  std::string state_ = dir_.file("state.json");
  std::string pid_file_ = dir_.file("workload.pid");
  std::string scenario_ = kScenario;
  std::map<std::string, std::string> env_{{"GPUSCOPE_SIM_STATE", state_},
                                          {"GPUSCOPE_SIM_TIME_SCALE", "10"},
                                          {"CUDA_VISIBLE_DEVICES", "\x01"},
                                          {"SLURM_JOB_ID", "\x01"}};

  std::vector<std::string> args(std::vector<std::string> options,
                                std::vector<std::string> workload = {}) {
    std::vector<std::string> a{"sweep",    "--simulate", scenario_, "-o", db_,
                               "--settle", "0.05",       "-s",      "50"};
    a.insert(a.end(), options.begin(), options.end());
    a.insert(a.end(), {"--", GPUSCOPE_TEST_SWEEP_WORKLOAD, "--seconds", "0.5", "--units", "1000",
                       "--pid-file", pid_file_});
    a.insert(a.end(), workload.begin(), workload.end());
    return a;
  }

  // The state file's entry of the one GPU (null without one).
  json state_entry() const {
    std::ifstream in(state_);
    if (!in) return nullptr;
    std::stringstream buffer;
    buffer << in.rdbuf();
    const auto state = json::parse(buffer.str());
    for (const auto& [uuid, gpu] : state["gpus"].items()) return gpu;
    return nullptr;
  }

  // The limit in force: the state file's entry, or the H100's default 700 W without one.
  double limit_w() const {
    const json entry = state_entry();
    return entry.is_null() ? 700 : entry["power_limit_mw"].get<double>() / 1000;
  }

  // The locked maximum SM clock in force; 0: not locked.
  unsigned locked_mhz() const {
    const json entry = state_entry();
    return entry.is_null() ? 0U : entry.value("locked_max_mhz", 0U);
  }

  json output_json() const {
    std::ifstream in(dir_.file("sweep.json"));
    std::stringstream buffer;
    buffer << in.rdbuf();
    return json::parse(buffer.str());
  }

  bool record_exists() const { return fs::exists(db_ + ".restore.json"); }

  // Three of sweep-h100.json's H100 (the count form), and their UUIDs in NVML order.
  std::vector<std::string> use_three_gpus() {
    json scenario = json::parse(read_file(kScenario));
    const json gpu = scenario["gpus"][0];
    scenario["name"] = "sweep-h100x3";
    scenario["gpus"] = {{"count", 3}, {"template", gpu}};
    scenario_ = dir_.file("sweep-h100x3.json");
    std::ofstream(scenario_) << scenario.dump();
    auto r = run_gpuscope({"devices", "--simulate", scenario_, "--json"}, env_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> uuids;
    const json devices = json::parse(r.out);
    for (const auto& d : devices["devices"]) uuids.push_back(d["uuid"]);
    EXPECT_EQ(uuids.size(), 3u) << r.out << r.err;
    return uuids;
  }

  // A GPU's entry in the state file: null when nothing ever set its limit or clocks.
  json state_entry_of(const std::string& uuid) const {
    std::ifstream in(state_);
    if (!in) return nullptr;
    std::stringstream buffer;
    buffer << in.rdbuf();
    const auto state = json::parse(buffer.str());
    return state["gpus"].contains(uuid) ? state["gpus"][uuid] : json(nullptr);
  }
  double limit_w_of(const std::string& uuid) const {
    const json entry = state_entry_of(uuid);
    return entry.is_null() ? 700 : entry["power_limit_mw"].get<double>() / 1000;
  }

  // Starts a sweep whose 300 W trials run for a long time and returns once the workload of the
  // first 300 W trial has started (it writes its pid file).
  std::unique_ptr<BackgroundProcess> start_long_sweep() {
    return start_long_sweep({"--power-limits", "300"}, [this] { return limit_w() == 300; });
  }

  // The same with locked clocks: the 1000 MHz trials run for a long time.
  std::unique_ptr<BackgroundProcess> start_long_clock_sweep() {
    return start_long_sweep({"--clocks", "1000"}, [this] { return locked_mhz() == 1000; });
  }

  template <class Applied>
  std::unique_ptr<BackgroundProcess> start_long_sweep(std::vector<std::string> setting,
                                                      Applied applied) {
    setting.insert(setting.end(), {"--repeat", "5"});
    auto a = args(setting, {"--seconds-capped", "30"});
    auto process = start_gpuscope(a, env_, dir_.file("out"), dir_.file("err"));
    for (int i = 0; i < 1200 && !applied(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    fs::remove(pid_file_);  // the baseline trial's
    EXPECT_TRUE(BackgroundProcess::wait_for_file(pid_file_, 30000)) << read_file(dir_.file("err"));
    EXPECT_TRUE(applied()) << read_file(dir_.file("err"));
    return process;
  }
};

// The setting with the least `cost` among those `allowed`, from the measured means.
double measured_best(const json& settings, const std::function<double(const json&)>& cost,
                     const std::function<bool(const json&)>& allowed = {}) {
  double best = -1, least = std::numeric_limits<double>::infinity();
  for (const auto& s : settings) {
    if (allowed && !allowed(s)) continue;
    const double c = cost(s);
    if (c < least) {
      least = c;
      best = s["setting"].get<double>();
    }
  }
  return best;
}

// The workload's own marks of its work (sweep_workload.cpp): the trials are measured from its
// begin to its end, in its own time stamps, so neither its start-up nor the machine's load
// enters the figures, which then follow the simulator's physics exactly.
const std::vector<std::string> kWindow{"--window-begin", "work begins at ([0-9.]+) s",
                                       "--window-end", "work ends at ([0-9.]+) s"};

// The simulator's physics for sweep-h100.json's steady phase (docs/sweep.md, "Testing"): demand
// 600 W, idle 70 W, compute_bound 0.85, power ∝ s^2.5 above idle.
double speed_under_cap(double cap_w) {
  if (cap_w >= 600) return 1;
  return 1 - 0.85 * (1 - std::pow((cap_w - 70) / 530, 0.4));
}
double speed_under_lock(double mhz) {
  return 1 - 0.85 * (1 - std::min(mhz, 1980.0) / 1980);
}
double power_under_lock(double mhz) {
  return 70 + 530 * std::pow(std::min(mhz, 1980.0) / 1980, 2.5);
}

double mean_of(const json& setting, const char* what) {
  return setting[what]["mean"].get<double>();
}

TEST_F(Sweep, FindsTheExpectedOptimumAndRestoresTheLimit) {
  // Expected from the simulator's physics (docs/sweep.md, "Testing"): energy falls with the cap
  // (min energy and min E·D at 200 W); only 500 W stays within 10 % of the 700 W time (+7 %;
  // 400 W is +17 %).
  auto a = args({"--power-limits", "200:500:100", "--work-regex", "processed ([0-9.]+) samples"});
  a.insert(a.begin() + 1, kWindow.begin(), kWindow.end());
  auto r = run_gpuscope(a, env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(limit_w(), 700);
  EXPECT_FALSE(record_exists());
  EXPECT_FALSE(fs::exists(db_ + ".trials"));

  const json out = output_json();
  EXPECT_EQ(out["sweep"]["status"], "finished");
  EXPECT_TRUE(out["sweep"]["restored"].get<bool>());
  EXPECT_EQ(out["sweep"]["window_begin"], kWindow[1]);
  std::map<std::string, double> chosen;
  for (const auto& c : out["recommendations"]) chosen[c["selector"]] = c["setting"].get<double>();
  EXPECT_EQ(chosen["min_energy"], 200) << out["settings"].dump(1);
  EXPECT_EQ(chosen["min_edp"], 200) << out["settings"].dump(1);
  EXPECT_EQ(chosen["min_energy_bounded"], 500) << out["settings"].dump(1);
  // Zeus's cost: 500 W and 400 W are 0.15 % apart in the physics, closer than the power's noise:
  // checked against the measurements.
  const auto zeus = [](const json& s) {
    return 0.5 * mean_of(s, "energy_j") + 0.5 * 700 * mean_of(s, "time_s");
  };
  EXPECT_EQ(chosen["zeus_cost"], measured_best(out["settings"], zeus)) << out["settings"].dump(1);

  // Each setting's time is the workload's nominal 0.5 s stretched by the cap's physics, and its
  // power the cap (at 700 W the uncapped 600 W), whatever the machine's load.
  const auto& settings = out["settings"];
  ASSERT_EQ(settings.size(), 5u);
  for (const auto& s : settings) {
    const double cap = s["setting"].get<double>();
    EXPECT_NEAR(mean_of(s, "time_s"), 0.5 / speed_under_cap(cap), 0.0005) << s.dump();
    EXPECT_NEAR(mean_of(s, "avg_power_w"), std::min(cap, 600.0), 0.015 * cap) << s.dump();
  }
  // Settings from 700 W down: energy and throughput fall, time rises; the energy per unit falls
  // with the energy, since every trial does the same work.
  EXPECT_EQ(settings[0]["setting"], 700);
  EXPECT_TRUE(settings[0]["baseline"].get<bool>());
  for (std::size_t i = 1; i < settings.size(); ++i) {
    const auto& hi = settings[i - 1];
    const auto& lo = settings[i];
    EXPECT_LT(lo["energy_j"]["mean"].get<double>(), hi["energy_j"]["mean"].get<double>()) << i;
    EXPECT_GT(lo["time_s"]["mean"].get<double>(), hi["time_s"]["mean"].get<double>()) << i;
    EXPECT_LT(lo["throughput"]["mean"].get<double>(), hi["throughput"]["mean"].get<double>());
    EXPECT_LT(lo["energy_per_unit_j"]["mean"].get<double>(),
              hi["energy_per_unit_j"]["mean"].get<double>());
    // Under a binding cap the GPU draws about the cap.
    EXPECT_LE(lo["avg_power_w"]["mean"].get<double>(), lo["setting"].get<double>() * 1.03);
  }
  // Work from the output inside the window: four lines of 250 samples per trial.
  for (const auto& t : out["trials"]) EXPECT_EQ(t["work_units"].get<double>(), 1000) << t.dump();
  EXPECT_EQ(out["trials"][0]["energy_source"], "counter");

  // The database: one ordinary run per trial, and the sweep tables.
  EXPECT_EQ(number(db_, "SELECT count(*) FROM runs"), 5);
  EXPECT_EQ(scalar(db_, "SELECT label FROM runs WHERE run_id = 2"),
            "sweep power_limit 500 W repeat 1");
  EXPECT_GT(number(db_, "SELECT count(*) FROM samples WHERE run_id = 5"), 3);
  EXPECT_EQ(number(db_, "SELECT count(*) FROM sweep_trials WHERE status = 'ok'"), 5);
  EXPECT_EQ(number(db_, "SELECT count(*) FROM sweep_plan"), 5);
  EXPECT_EQ(number(db_,
                   "SELECT setting FROM sweep_recommendations WHERE selector = "
                   "'min_energy_bounded'"),
            500);
  EXPECT_EQ(number(db_, "SELECT power_limit_w FROM sweep_restore"), 700);
  EXPECT_EQ(number(db_, "SELECT restored FROM sweep"), 1);
  // Every line the job printed is kept: begin, four steps, end, throughput.
  EXPECT_EQ(number(db_, "SELECT count(*) FROM output WHERE run_id = 1"), 7);

  // Table, CSV, PNG, HTML.
  EXPECT_NE(r.out.find("minimum energy with slowdown ≤ 10 %"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("700 W*"), std::string::npos) << r.out;
  const std::string csv = read_file(dir_.file("sweep.csv"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 6) << csv;
  EXPECT_EQ(csv.rfind("trial,setting,unit", 0), 0u);
  const std::string png = read_file(dir_.file("sweep.png"));
  ASSERT_GT(png.size(), 1000u);
  EXPECT_EQ(png.substr(1, 3), "PNG");
  const std::string html = read_file(dir_.file("sweep.html"));
  EXPECT_NE(html.find("data:image/png;base64,iVBOR"), std::string::npos);
  EXPECT_NE(html.find("<section id=\"sweep\" class=\"sweep\">"), std::string::npos);
  EXPECT_NE(html.find("<tr data-selector=\"min_energy_bounded\" data-setting=\"500\">"),
            std::string::npos);

  // gpuscope report of the sweep database: the same section, first, with the trials' runs after.
  auto report = run_gpuscope({"report", db_, "-o", dir_.file("report.html")}, env_);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const std::string page = read_file(dir_.file("report.html"));
  const auto section = page.find("<main id=\"report\"><section id=\"sweep\" class=\"sweep\">");
  ASSERT_NE(section, std::string::npos);
  const std::string body = page.substr(section, page.find("</section>", section) - section);
  EXPECT_NE(body.find("<tr data-selector=\"min_energy\" data-setting=\"200\">"), std::string::npos);
  EXPECT_NE(body.find("<tr data-selector=\"min_edp\" data-setting=\"200\">"), std::string::npos);
  EXPECT_NE(body.find("<tr data-selector=\"min_energy_bounded\" data-setting=\"500\">"),
            std::string::npos);
  EXPECT_NE(body.find("data:image/png;base64,iVBOR"), std::string::npos);
  for (int trial = 1; trial <= 5; ++trial) {
    EXPECT_NE(body.find("<tr data-trial=\"" + std::to_string(trial) + "\">"), std::string::npos);
  }
}

TEST_F(Sweep, TheWindowLeavesTheJobsStartUpOut) {
  // 0.3 s of start-up before the work (imports, data loading) in every trial: measured from the
  // job's own begin and end marks, each trial's time is its work's, 0.5 s / speed, and its
  // energy the cap's power over that time.
  auto a = args({"--power-limits", "300", "--work-regex", "processed ([0-9.]+) samples"},
                {"--startup", "0.3"});
  a.insert(a.begin() + 1, kWindow.begin(), kWindow.end());
  auto r = run_gpuscope(a, env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = output_json();
  ASSERT_EQ(out["trials"].size(), 2u);
  for (const auto& t : out["trials"]) {
    const double cap = t["setting"].get<double>();
    const double expected = 0.5 / speed_under_cap(cap);
    EXPECT_NEAR(t["time_s"].get<double>(), expected, 0.0005) << t.dump();
    EXPECT_NEAR(t["energy_j"].get<double>(), std::min(cap, 600.0) * expected,
                0.015 * cap * expected)
        << t.dump();
    EXPECT_EQ(t["work_units"].get<double>(), 1000);
  }
  // Without the marks the same trials include the start-up.
  fs::remove(db_);
  auto plain = run_gpuscope(
      args({"--power-limits", "300", "-f", "--work-units", "1000"}, {"--startup", "0.3"}), env_);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const json whole = output_json();
  EXPECT_GT(whole["trials"][0]["time_s"].get<double>(), 0.5 + 0.29) << whole["trials"].dump();
}

TEST_F(Sweep, AJobThatNeverMarksItsWorkFailsTheTrial) {
  auto r = run_gpuscope(args({"--power-limits", "300", "--window-begin", "never printed"}), env_);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("printed no line matching --window-begin 'never printed'"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(limit_w(), 700);
  EXPECT_EQ(scalar(db_, "SELECT status FROM sweep"), "failed");

  auto both =
      run_gpuscope(args({"--power-limits", "300", "--warmup", "1", "--window-begin", "x"}), env_);
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("--warmup and --window-begin cannot be combined"), std::string::npos)
      << both.err;
  auto groups = run_gpuscope(args({"--power-limits", "300", "--window-end", "(a)(b)"}), env_);
  EXPECT_EQ(groups.exit_code, 2);
  EXPECT_NE(groups.err.find("--window-end '(a)(b)' has 2 groups"), std::string::npos) << groups.err;
}

TEST_F(Sweep, AGpuInMigModeSharedWithOtherInstancesIsRefused) {
  // An H100 split 4g + 2g + 1g (three jobs' instances); the sweep's job holds the 1g one only.
  scenario_ = std::string(GPUSCOPE_TEST_FIXTURE_SCENARIO_DIR) + "/h100-mig-mixed.json";
  auto r = run_gpuscope(
      args({"--gpus", "MIG-b1000000-0000-5000-8000-000000000013", "--power-limits", "300"}), env_);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("GPU 0 is in MIG mode and this job holds 1 of its 3 instances "
                       "(GI 7 (1g.10gb))"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("GI 1 (4g.40gb) and GI 3 (2g.20gb)"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(db_)) << "refused before anything ran";
  EXPECT_TRUE(state_entry().is_null()) << "no setting was changed";
  // The whole GPU, all its instances the job's: the sweep runs and says so.
  auto whole = run_gpuscope(args({"--gpus", "0", "--power-limits", "300"}), env_);
  EXPECT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_NE(whole.err.find("GPU 0 is in MIG mode and its 3 instances are all this job's"),
            std::string::npos)
      << whole.err;
}

TEST_F(Sweep, MultiGpuSweepSetsOnlyTheSelectedGpusAndSumsTheirEnergy) {
  // Three H100; the sweep takes GPUs 0 and 2 and leaves GPU 1 alone.
  const auto uuids = use_three_gpus();
  auto a = args(
      {"--gpus", "0,2", "--power-limits", "300", "--work-regex", "processed ([0-9.]+) samples"});
  a.insert(a.begin() + 1, kWindow.begin(), kWindow.end());
  auto r = run_gpuscope(a, env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  const json out = output_json();
  EXPECT_EQ(out["sweep"]["gpus"], json::array({0, 2}));
  EXPECT_EQ(out["sweep"]["p_max_w"].get<double>(), 1400);  // Zeus's P_max: both GPUs' maximum
  ASSERT_EQ(out["restore"].size(), 2u);
  EXPECT_EQ(out["restore"][0]["uuid"], uuids[0]);
  EXPECT_EQ(out["restore"][1]["uuid"], uuids[2]);
  // The energy is both GPUs' counters summed: twice one GPU's power over the same time.
  for (const auto& t : out["trials"]) {
    const double cap = t["setting"].get<double>();
    const double time = 0.5 / speed_under_cap(cap);
    EXPECT_NEAR(t["time_s"].get<double>(), time, 0.0005) << t.dump();
    EXPECT_NEAR(t["avg_power_w"].get<double>(), 2 * std::min(cap, 600.0), 0.03 * cap) << t.dump();
    EXPECT_NEAR(t["energy_j"].get<double>(), 2 * std::min(cap, 600.0) * time, 0.03 * cap * time)
        << t.dump();
  }
  // Each trial sampled exactly GPUs 0 and 2, and during the 300 W trial both were at 300 W.
  for (int run = 1; run <= 2; ++run) {
    EXPECT_EQ(scalar(db_,
                     "SELECT group_concat(device_index) FROM (SELECT device_index FROM "
                     "devices WHERE run_id = " +
                         std::to_string(run) + " ORDER BY device_index)"),
              "0,2");
  }
  for (int gpu : {0, 2}) {
    const std::string where =
        "FROM samples WHERE run_id = 2 AND device_index = " + std::to_string(gpu);
    EXPECT_EQ(number(db_, "SELECT min(power_limit_w) " + where), 300) << gpu;
    EXPECT_EQ(number(db_, "SELECT max(power_limit_w) " + where), 300) << gpu;
  }
  EXPECT_EQ(number(db_, "SELECT count(*) FROM samples WHERE device_index = 1"), 0);
  // All back at 700 W; GPU 1's limit was never set (the driver's state has no entry for it).
  EXPECT_EQ(limit_w_of(uuids[0]), 700);
  EXPECT_EQ(limit_w_of(uuids[2]), 700);
  EXPECT_TRUE(state_entry_of(uuids[1]).is_null()) << state_entry_of(uuids[1]).dump();
  EXPECT_FALSE(record_exists());
}

TEST_F(Sweep, MultiGpuSweepRestoresEveryGpuAfterAFailedJobAndSigint) {
  const auto uuids = use_three_gpus();
  // The job fails in the 300 W trial, while GPUs 0 and 2 are capped.
  auto failed =
      run_gpuscope(args({"--gpus", "2,0", "--power-limits", "300"}, {"--exit-capped", "3"}), env_);
  EXPECT_EQ(failed.exit_code, 3) << failed.err;
  EXPECT_EQ(number(db_,
                   "SELECT count(*) FROM sweep_trials WHERE status = 'failed' AND "
                   "setting = 300"),
            1);
  EXPECT_EQ(number(db_, "SELECT min(power_limit_w) FROM samples WHERE run_id = 2"), 300);
  EXPECT_EQ(number(db_, "SELECT count(*) FROM sweep_restore WHERE power_limit_w = 700"), 2);
  EXPECT_EQ(limit_w_of(uuids[0]), 700);
  EXPECT_EQ(limit_w_of(uuids[2]), 700);
  EXPECT_TRUE(state_entry_of(uuids[1]).is_null());
  EXPECT_FALSE(record_exists());

  // SIGINT while both are capped at 300 W.
  fs::remove(db_);
  auto process = start_long_sweep({"--gpus", "0,2", "--power-limits", "300", "-f"}, [&] {
    return limit_w_of(uuids[0]) == 300 && limit_w_of(uuids[2]) == 300;
  });
  EXPECT_TRUE(state_entry_of(uuids[1]).is_null());
  process->signal(SIGINT);
  EXPECT_EQ(process->wait(), 130) << read_file(dir_.file("err"));
  EXPECT_EQ(limit_w_of(uuids[0]), 700);
  EXPECT_EQ(limit_w_of(uuids[2]), 700);
  EXPECT_TRUE(state_entry_of(uuids[1]).is_null());
  EXPECT_FALSE(record_exists());
  EXPECT_EQ(scalar(db_, "SELECT status FROM sweep"), "interrupted");
}

TEST_F(Sweep, RepeatsGiveTheSpread) {
  auto r =
      run_gpuscope(args({"--power-limits", "300", "--repeat", "3", "--work-units", "50"}), env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = output_json();
  ASSERT_EQ(out["trials"].size(), 6u);
  for (const auto& s : out["settings"]) {
    EXPECT_EQ(s["trials"], 3);
    EXPECT_EQ(s["time_s"]["count"].get<int>() + s["outliers"].get<int>(), 3);
    EXPECT_LE(s["time_s"]["min"].get<double>(), s["time_s"]["mean"].get<double>());
    EXPECT_GE(s["time_s"]["max"].get<double>(), s["time_s"]["mean"].get<double>());
  }
  // Repeat-major order: 700, 300, 700, 300, ...
  EXPECT_EQ(out["trials"][1]["setting"], 300);
  EXPECT_EQ(out["trials"][2]["setting"], 700);
  EXPECT_EQ(out["trials"][2]["repeat"], 2);
  EXPECT_NEAR(out["trials"][1]["energy_per_unit_j"].get<double>(),
              out["trials"][1]["energy_j"].get<double>() / 50, 1e-9);
}

TEST_F(Sweep, JobFailureStopsTheSweepAndRestores) {
  auto r = run_gpuscope(args({"--power-limits", "300"}, {"--exit", "3"}), env_);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("exited with code 3"), std::string::npos) << r.err;
  EXPECT_EQ(limit_w(), 700);
  EXPECT_FALSE(record_exists());
  EXPECT_EQ(scalar(db_, "SELECT status FROM sweep"), "failed");
  EXPECT_EQ(number(db_, "SELECT count(*) FROM sweep_trials WHERE status = 'failed'"), 1);
  EXPECT_EQ(number(db_, "SELECT count(*) FROM sweep_recommendations"), 0);
}

TEST_F(Sweep, SigintStopsTheSweepAndRestores) {
  // Interrupt while the first 300 W trial runs.
  auto process = start_long_sweep();
  process->signal(SIGINT);
  EXPECT_EQ(process->wait(), 130) << read_file(dir_.file("err"));
  EXPECT_EQ(limit_w(), 700);
  EXPECT_FALSE(record_exists());
  EXPECT_EQ(scalar(db_, "SELECT status FROM sweep"), "interrupted");
  EXPECT_EQ(number(db_, "SELECT count(*) FROM sweep_trials WHERE status = 'interrupted'"), 1);
}

TEST_F(Sweep, SigtermStopsTheSweepAndRestores) {
  auto process = start_long_sweep();
  process->signal(SIGTERM);
  EXPECT_EQ(process->wait(), 143) << read_file(dir_.file("err"));
  EXPECT_EQ(limit_w(), 700);
  EXPECT_FALSE(record_exists());
}

TEST_F(Sweep, KilledGpuscopeLeavesARecordThatRestoreUses) {
  auto process = start_long_sweep();
  process->signal(SIGKILL);
  process->wait();
  // The workload is in its own process group and outlives gpuscope: end it.
  if (auto pid = std::atoi(read_file(pid_file_).c_str()); pid > 0) kill(pid, SIGKILL);
  EXPECT_EQ(limit_w(), 300);
  ASSERT_TRUE(record_exists());

  // A new sweep into the same file refuses to start: it would record 300 W as the original.
  auto refused = run_gpuscope(args({"--power-limits", "300"}), env_);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("--restore"), std::string::npos) << refused.err;

  // --restore finds the backend in the record: no --simulate needed.
  auto restored = run_gpuscope({"sweep", "--restore", "-o", db_}, env_);
  EXPECT_EQ(restored.exit_code, 0) << restored.err;
  EXPECT_NE(restored.err.find("restored 1 GPU"), std::string::npos) << restored.err;
  EXPECT_EQ(limit_w(), 700);
  EXPECT_FALSE(record_exists());

  auto again = run_gpuscope({"sweep", "--restore", "-o", db_}, env_);
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_NE(again.err.find("nothing to restore"), std::string::npos) << again.err;
}

TEST_F(Sweep, RestoreWorksFromAnotherFolder) {
  // The sweep is given a relative --simulate path (the record stored it as typed, so --restore
  // from another folder could not find the scenario).
  scenario_ = fs::relative(scenario_, fs::current_path()).string();
  ASSERT_TRUE(fs::path(scenario_).is_relative());
  auto process = start_long_sweep();
  process->signal(SIGKILL);
  process->wait();
  if (auto pid = std::atoi(read_file(pid_file_).c_str()); pid > 0) kill(pid, SIGKILL);
  ASSERT_TRUE(record_exists());
  const json record = json::parse(read_file(db_ + ".restore.json"));
  EXPECT_TRUE(fs::path(record["simulate"].get<std::string>()).is_absolute()) << record.dump();
  EXPECT_TRUE(fs::path(record["output"].get<std::string>()).is_absolute()) << record.dump();

  std::vector<std::string> shell{
      "sh", "-c",
      std::string("cd / && exec ") + GPUSCOPE_TEST_BINARY + " sweep --restore -o " + db_};
  auto restored = run_process(shell, env_);
  EXPECT_EQ(restored.exit_code, 0) << restored.err;
  EXPECT_EQ(limit_w(), 700);
  EXPECT_FALSE(record_exists());
}

TEST_F(Sweep, WithoutPermissionNothingRuns) {
  auto env = env_;
  env["GPUSCOPE_SIM_PRIVILEGED"] = "0";
  auto r = run_gpuscope(args({"--power-limits", "300"}), env);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no permission to set power limits on GPU 0"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("root"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(pid_file_)) << "the workload must not run";
  EXPECT_FALSE(fs::exists(db_));
  EXPECT_FALSE(record_exists());
}

TEST_F(Sweep, DryRunPrintsThePlanAndChangesNothing) {
  auto r =
      run_gpuscope(args({"--power-limits", "200:700:250", "--repeat", "2", "--dry-run"}), env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("700 W (default), 450 W, 200 W"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("= 6 runs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("permission to set power limits: yes"), std::string::npos) << r.out;
  EXPECT_EQ(limit_w(), 700);
  EXPECT_FALSE(fs::exists(pid_file_));
  EXPECT_FALSE(fs::exists(db_));
  EXPECT_FALSE(record_exists());

  auto env = env_;
  env["GPUSCOPE_SIM_PRIVILEGED"] = "0";
  auto denied = run_gpuscope(args({"--power-limits", "300", "--dry-run"}), env);
  EXPECT_EQ(denied.exit_code, 1);
  EXPECT_NE(denied.out.find("gpuscope sweep plan"), std::string::npos) << denied.out;
  EXPECT_NE(denied.err.find("no permission"), std::string::npos) << denied.err;
}

TEST_F(Sweep, CapsOutsideTheGpuRangeAreRefused) {
  auto r = run_gpuscope(args({"--power-limits", "100:700:100", "--dry-run"}), env_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("100 W is outside the power limit range"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("200–700 W"), std::string::npos) << r.err;
}

TEST_F(Sweep, ClocksAreRefusedWhereTheDriverCannotLockThem) {
  // The same H100, but its driver withholds the locked-clock calls (as on a GPU without them).
  json scenario = json::parse(read_file(kScenario));
  scenario["name"] = "sweep-h100-no-clock-locks";
  scenario["gpus"][0]["faults"]["not_supported"] = {"nvmlDeviceSetGpuLockedClocks",
                                                    "nvmlDeviceResetGpuLockedClocks"};
  scenario_ = dir_.file("no-clock-locks.json");
  std::ofstream(scenario_) << scenario.dump();
  auto r = run_gpuscope(args({"--clocks", "1000,1500", "--dry-run"}), env_);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("GPU 0 cannot have its locked SM clocks set"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(pid_file_));
}

TEST_F(Sweep, ClockSweepFindsTheExpectedOptimumAndUnlocksTheClocks) {
  // Expected from the simulator's physics (docs/sweep.md, "Testing"): with s = f / 1980 MHz,
  // power = 70 + 530·s^2.5 W and speed = 1 − 0.85·(1 − s); energy falls all the way down to
  // 600 MHz (−60 %), E·D is lowest at 1000 MHz, and only 1800 MHz stays within 15 % of the
  // unlocked time (+8 %; 1500 MHz is +26 %).
  auto a = args({"--clocks", "1800,1500,1000,600", "--max-slowdown", "15%", "--work-regex",
                 "processed ([0-9.]+) samples"});
  a.insert(a.begin() + 1, kWindow.begin(), kWindow.end());
  auto r = run_gpuscope(a, env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(locked_mhz(), 0U);
  EXPECT_EQ(limit_w(), 700);
  EXPECT_FALSE(record_exists());

  const json out = output_json();
  EXPECT_EQ(out["sweep"]["status"], "finished");
  EXPECT_TRUE(out["sweep"]["restored"].get<bool>());
  std::map<std::string, double> chosen;
  for (const auto& c : out["recommendations"]) chosen[c["selector"]] = c["setting"].get<double>();
  EXPECT_EQ(chosen["min_energy"], 600) << out["settings"].dump(1);
  EXPECT_EQ(chosen["min_edp"], 1000) << out["settings"].dump(1);
  EXPECT_EQ(chosen["min_energy_bounded"], 1800) << out["settings"].dump(1);
  for (const auto& s : out["settings"]) {
    const double mhz = s["setting"].get<double>();
    EXPECT_NEAR(mean_of(s, "time_s"), 0.5 / speed_under_lock(mhz), 0.0005) << s.dump();
    EXPECT_NEAR(mean_of(s, "avg_power_w"), power_under_lock(mhz), 0.02 * power_under_lock(mhz))
        << s.dump();
  }

  const auto& settings = out["settings"];
  ASSERT_EQ(settings.size(), 5u);
  EXPECT_EQ(settings[0]["setting"], 1980);
  EXPECT_TRUE(settings[0]["baseline"].get<bool>());
  for (std::size_t i = 1; i < settings.size(); ++i) {
    const auto& hi = settings[i - 1];
    const auto& lo = settings[i];
    EXPECT_LT(lo["energy_j"]["mean"].get<double>(), hi["energy_j"]["mean"].get<double>()) << i;
    EXPECT_LT(lo["avg_power_w"]["mean"].get<double>(), hi["avg_power_w"]["mean"].get<double>());
    EXPECT_GT(lo["time_s"]["mean"].get<double>(), hi["time_s"]["mean"].get<double>()) << i;
    // The sampled SM clock is the locked one.
    const double mhz = lo["setting"].get<double>();
    EXPECT_NEAR(lo["sm_clock_mean_mhz"].get<double>(), mhz, 0.02 * mhz) << lo.dump();
  }
  EXPECT_NEAR(settings[0]["sm_clock_mean_mhz"].get<double>(), 1980, 40);
  EXPECT_EQ(number(db_, "SELECT count(*) FROM sweep_trials WHERE status = 'ok'"), 5);
  EXPECT_EQ(number(db_, "SELECT setting FROM sweep_recommendations WHERE selector = 'min_edp'"),
            1000);
  EXPECT_EQ(number(db_, "SELECT restored FROM sweep"), 1);
  EXPECT_NE(r.out.find("unlocked"), std::string::npos) << r.out;
}

TEST_F(Sweep, SigintStopsAClockSweepAndUnlocksTheClocks) {
  auto process = start_long_clock_sweep();
  process->signal(SIGINT);
  EXPECT_EQ(process->wait(), 130) << read_file(dir_.file("err"));
  EXPECT_EQ(locked_mhz(), 0U);
  EXPECT_EQ(limit_w(), 700);
  EXPECT_FALSE(record_exists());
  EXPECT_EQ(scalar(db_, "SELECT status FROM sweep"), "interrupted");
}

TEST_F(Sweep, RestoreUnlocksTheClocksAfterAKilledClockSweep) {
  auto process = start_long_clock_sweep();
  process->signal(SIGKILL);
  process->wait();
  if (auto pid = std::atoi(read_file(pid_file_).c_str()); pid > 0) kill(pid, SIGKILL);
  EXPECT_EQ(locked_mhz(), 1000U);
  ASSERT_TRUE(record_exists());

  auto restored = run_gpuscope({"sweep", "--restore", "-o", db_}, env_);
  EXPECT_EQ(restored.exit_code, 0) << restored.err;
  EXPECT_NE(restored.err.find("clocks unlocked"), std::string::npos) << restored.err;
  EXPECT_EQ(locked_mhz(), 0U);
  EXPECT_EQ(limit_w(), 700);
  EXPECT_FALSE(record_exists());
}

TEST_F(Sweep, ClocksNeedPermission) {
  auto env = env_;
  env["GPUSCOPE_SIM_PRIVILEGED"] = "0";
  auto r = run_gpuscope(args({"--clocks", "1000"}), env);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no permission to set locked SM clocks on GPU 0"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(pid_file_)) << "the workload must not run";
  EXPECT_EQ(locked_mhz(), 0U);
}

// A job argument that is not UTF-8 made the sweep run every trial and then exit 1 without its
// table, CSV, JSON or HTML. Every output is written; the bytes show as U+FFFD.
TEST_F(Sweep, ArgumentsThatAreNotUtf8LoseNoOutput) {
  // sweep_workload ignores a lone trailing argument.
  const auto r = run_gpuscope(args({"--power-limits", "300"}, {"odd\xff\xfe"}), env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("300 W"), std::string::npos) << r.out;
  for (const char* name : {"sweep.db", "sweep.csv", "sweep.json", "sweep.html"}) {
    EXPECT_TRUE(fs::exists(dir_.file(name))) << name << "\n" << r.err;
  }
  const json out = output_json();  // a strict parse: throws on invalid UTF-8
  EXPECT_NE(out.dump().find("odd\xef\xbf\xbd\xef\xbf\xbd"), std::string::npos);
  EXPECT_EQ(r.err.find("error"), std::string::npos) << r.err;
}

// Each output stands alone: one that cannot be written (here a folder in the CSV's place) is
// reported after the others were written, and the exit status says so.
TEST_F(Sweep, AnOutputThatFailsCostsTheOthersNothing) {
  fs::create_directory(dir_.file("sweep.csv"));
  const auto r = run_gpuscope(args({"--power-limits", "300"}), env_);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  for (const char* name : {"sweep.db", "sweep.json", "sweep.html"}) {
    EXPECT_TRUE(fs::exists(dir_.file(name))) << name << "\n" << r.err;
  }
  EXPECT_NE(r.out.find("300 W"), std::string::npos) << r.out;
  const auto at = r.err.find("gpuscope: error: " + dir_.file("sweep.csv") + " was not written");
  ASSERT_NE(at, std::string::npos) << r.err;
  EXPECT_GT(at, r.err.find("gpuscope: wrote")) << "the failure is reported after the outputs";
}

// An MI300X swept by power cap through the simulated AMD SMI: the same trials, energies from
// its accumulator, and the cap restored whichever way the sweep ends.
class AmdSweep : public ::testing::Test {
 protected:
  TempDir dir_;
  std::string db_ = dir_.file("sweep.db");
  std::string state_ = dir_.file("state.json");
  std::string scenario_ = std::string(GPUSCOPE_TEST_FIXTURE_SCENARIO_DIR) + "/sweep-mi300x.json";
  std::map<std::string, std::string> env_{{"GPUSCOPE_SIM_STATE", state_},
                                          {"CUDA_VISIBLE_DEVICES", "\x01"},
                                          {"ROCR_VISIBLE_DEVICES", "\x01"},
                                          {"HIP_VISIBLE_DEVICES", "\x01"},
                                          {"SLURM_JOB_ID", "\x01"}};

  std::vector<std::string> args(std::vector<std::string> options,
                                std::vector<std::string> command) {
    std::vector<std::string> a{"sweep", "--simulate", scenario_, "-o",     db_, "--settle",
                               "0.05",  "-s",         "50",      "--gpus", "0"};
    a.insert(a.end(), options.begin(), options.end());
    a.push_back("--");
    a.insert(a.end(), command.begin(), command.end());
    return a;
  }

  // The cap GPU 0 holds, as a new process reads it.
  double cap_w() {
    auto r = run_gpuscope({"devices", "--simulate", scenario_, "--json"}, env_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out)["amd"]["devices"][0]["power_limit_w"]["current"].get<double>();
  }
};

TEST_F(AmdSweep, TrialsAtEachCapWithTheAccumulatorsEnergyThenTheCapIsBack) {
  auto r = run_gpuscope(args({"--power-limits", "400:600:200"}, {"sleep", "0.4"}), env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("GPU 0 restored: power limit 750 W"), std::string::npos) << r.err;
  EXPECT_EQ(cap_w(), 750);
  const json out = json::parse(read_file(dir_.file("sweep.json")));
  EXPECT_EQ(out["sweep"]["status"], "finished");
  EXPECT_TRUE(out["sweep"]["restored"].get<bool>());
  std::map<double, double> power;  // setting → mean power
  for (const auto& s : out["settings"]) {
    power[s["setting"].get<double>()] = s["avg_power_w"]["mean"].get<double>();
  }
  ASSERT_EQ(power.size(), 3U) << out["settings"].dump(1);  // 400, 600 and the 750 W baseline
  // The 700 W job runs free at 750 W and is held at 400 W; each trial's energy came from the
  // accumulator.
  EXPECT_NEAR(power[750], 700, 40) << out["settings"].dump(1);
  EXPECT_LT(power[400], 420) << out["settings"].dump(1);
  EXPECT_LT(power[400], power[600]);
  for (const auto& t : out["trials"]) EXPECT_EQ(t["energy_source"], "counter") << t.dump();
  // The samples of the 400 W trial were taken under that cap.
  EXPECT_EQ(number(db_,
                   "SELECT max(power_limit_w) FROM samples JOIN runs USING (run_id) WHERE "
                   "runs.label LIKE '%400 W%'"),
            400);
}

TEST_F(AmdSweep, ClocksAreNvidiasAndCapsNeedPermission) {
  auto clocks = run_gpuscope(args({"--clocks", "1000"}, {"true"}), env_);
  EXPECT_EQ(clocks.exit_code, 1);
  EXPECT_NE(clocks.err.find("sweep AMD GPUs with --power-limits"), std::string::npos) << clocks.err;
  auto env = env_;
  env["GPUSCOPE_SIM_PRIVILEGED"] = "0";
  auto denied = run_gpuscope(args({"--power-limits", "500"}, {"true"}), env);
  EXPECT_EQ(denied.exit_code, 1);
  EXPECT_NE(denied.err.find("no permission to set power limits on GPU 0"), std::string::npos)
      << denied.err;
  EXPECT_FALSE(fs::exists(db_));
  EXPECT_FALSE(fs::exists(db_ + ".restore.json"));
}

TEST_F(AmdSweep, AKilledSweepIsRestoredToTheCapItFound) {
  // An administrator left the cap at 600 W; the sweep's first trial, its 750 W baseline, runs
  // long and gpuscope is killed in it.
  auto devices = run_gpuscope({"devices", "--simulate", scenario_, "--json"}, env_);
  ASSERT_EQ(devices.exit_code, 0) << devices.err;
  const std::string uuid = json::parse(devices.out)["amd"]["devices"][0]["uuid"];
  std::ofstream(state_)
      << json{{"version", 1}, {"gpus", {{uuid, {{"power_limit_mw", 600000}}}}}}.dump();
  ASSERT_EQ(cap_w(), 600);
  const std::string started = dir_.file("started");
  auto process = start_gpuscope(
      args({"--power-limits", "400"}, {"sh", "-c", "echo $$ > " + started + "; exec sleep 30"}),
      env_, dir_.file("out"), dir_.file("err"));
  ASSERT_TRUE(BackgroundProcess::wait_for_file(started, 30000)) << read_file(dir_.file("err"));
  EXPECT_EQ(cap_w(), 750);
  process->signal(SIGKILL);
  process->wait();
  // The job is in its own process group and outlives gpuscope: end it.
  if (auto pid = std::atoi(read_file(started).c_str()); pid > 0) kill(pid, SIGKILL);
  ASSERT_TRUE(fs::exists(db_ + ".restore.json"));
  auto restored = run_gpuscope({"sweep", "--restore", "-o", db_}, env_);
  EXPECT_EQ(restored.exit_code, 0) << restored.err;
  EXPECT_NE(restored.err.find("restored 1 GPU"), std::string::npos) << restored.err;
  EXPECT_EQ(cap_w(), 600);
  EXPECT_FALSE(fs::exists(db_ + ".restore.json"));
}

}  // namespace
}  // namespace gpuscope::testing
