// `gpuscope analyze` on runs profiled from the simulated scenarios, through the binary.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/process.hpp"
#include "support/sql.hpp"

namespace gpuscope::testing {
namespace {

using nlohmann::json;

class Analyze : public ::testing::Test {
 protected:
  TempDir dir_;
  std::map<std::string, std::string> env_{{"GPUSCOPE_SIM_STATE", dir_.file("state.json")},
                                          {"CUDA_VISIBLE_DEVICES", "\x01"},
                                          {"SLURM_JOB_ID", "\x01"}};

  // Profiles `scenario` for `seconds` of wall time at `time_scale` scenario seconds per second.
  std::string profile(const std::string& scenario, const std::string& seconds,
                      const std::string& time_scale, std::vector<std::string> extra = {}) {
    const std::string db = dir_.file(scenario + ".db");
    auto env = env_;
    env["GPUSCOPE_SIM_TIME_SCALE"] = time_scale;
    std::vector<std::string> args{"profile", "--simulate", scenario, "-q", "-s", "50", "-o", db};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--", "sleep", seconds});
    auto r = run_gpuscope(args, env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return db;
  }

  json analyze_json(const std::vector<std::string>& args) {
    std::vector<std::string> all{"analyze", "--json"};
    all.insert(all.end(), args.begin(), args.end());
    auto r = run_gpuscope(all);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }
};

TEST_F(Analyze, StragglerScenarioNamesTheStraggler) {
  // 4 scenario seconds per wall second: 3 s of wall time cover 12 s of training.
  const auto db = profile("h100x4-straggler", "3", "4");
  const auto out = analyze_json({db});
  ASSERT_EQ(out["gpus"].size(), 4U);
  ASSERT_FALSE(out["balance"].is_null());
  const auto& stragglers = out["balance"]["stragglers"];
  ASSERT_EQ(stragglers.size(), 1U) << out["balance"].dump(2);
  EXPECT_EQ(out["gpus"][stragglers[0]["gpu"].get<std::size_t>()]["index"], 3);
  bool named = false;
  for (const auto& f : out["findings"]) {
    if (f["kind"] == "straggler")
      named = f["text"].get<std::string>().find("GPU 3") != std::string::npos;
  }
  EXPECT_TRUE(named) << out["findings"].dump(2);
}

TEST_F(Analyze, IdleStartIsTrimmedToTheRightLength) {
  // 20 s of idle, then 2 s of warm-up and 30 s of compute, at 20× speed: 4 s of wall time cover
  // 80 scenario seconds, so the idle start is 25 % of the run (trimming looks at the first 30 %).
  // Scenario time zero is pinned here, so a slow start of gpuscope (a loaded CI machine) moves
  // the run's start, not the expectation: the activity rises half-way through the warm-up, at
  // 21 scenario s = 1.05 s after the epoch, and the cut is measured from the run's start.
  const auto epoch_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  env_["GPUSCOPE_SIM_EPOCH_NS"] = std::to_string(epoch_ns);
  const auto db = profile("h100x8-idle-start", "4", "20");
  const auto out = analyze_json({db});
  const double start_s =
      (number(db, "SELECT start_wall_ns FROM runs") - static_cast<double>(epoch_ns)) / 1e9;
  ASSERT_LT(start_s, 0.6) << "gpuscope took too long to start for this test to mean anything";
  const double expected = 21.0 / 20 - start_s;
  // One 50 ms trimming bin either way, and half the 2 s (100 ms wall) warm-up ramp.
  EXPECT_NEAR(out["window"]["leading_trimmed_s"].get<double>(), expected, 0.1)
      << out["window"].dump();
  bool said = false;
  for (const auto& f : out["findings"]) said |= f["kind"] == "idle_start";
  EXPECT_TRUE(said);
  // Without trimming, the same run's mean activity is lower.
  const auto untrimmed = analyze_json({db, "--detect-outliers", "none"});
  EXPECT_EQ(untrimmed["window"]["leading_trimmed_s"].get<double>(), 0.0);
  EXPECT_LT(untrimmed["over_both"]["sm_active_pct"]["mean"].get<double>(),
            out["over_both"]["sm_active_pct"]["mean"].get<double>());
}

TEST_F(Analyze, JsonHasTheDocumentedShape) {
  const auto db = profile("h100", "1", "1");
  const auto out = analyze_json({db});
  EXPECT_EQ(out["schema"], "gpuscope-analysis/1");
  for (const char* key :
       {"inputs", "runs", "duration_s", "window", "resolution_s", "over_both", "efficiency_score",
        "gpus", "over_space", "balance", "energy_j", "work", "carbon", "findings", "notes"}) {
    EXPECT_TRUE(out.contains(key)) << key;
  }
  const auto& gpu = out["gpus"][0];
  for (const char* key : {"host", "index", "uuid", "name", "activity", "energy_j", "over_time",
                          "average_power_w", "peak_power_w", "power_limit_w"}) {
    EXPECT_TRUE(gpu.contains(key)) << key;
  }
  const auto& power = gpu["over_time"]["power_w"];
  for (const char* key : {"mean", "median", "p5", "p95", "max"}) EXPECT_TRUE(power.contains(key));
  EXPECT_LE(power["p5"].get<double>(), power["median"].get<double>());
  EXPECT_LE(power["median"].get<double>(), power["p95"].get<double>());
  const auto& space = out["over_space"]["power_w"];
  EXPECT_EQ(space["t_s"].size(), space["mean"].size());
  EXPECT_GT(space["t_s"].size(), 5U);
}

// When the devices table does not list every GPU that has samples (an edited or damaged file),
// both passes read with one cursor over the run instead of GPU by GPU on the worker threads:
// the figures are the same either way.
TEST_F(Analyze, ACursorOverTheRunGivesWhatTheWorkersGive) {
  const auto db = profile("h100x4-straggler", "2", "4");
  const std::string copy = dir_.file("without-device.db");
  std::filesystem::copy_file(db, copy);
  run_sql(copy, "DELETE FROM devices WHERE device_index = 2");
  const auto by_gpu = analyze_json({db});
  const auto by_cursor = analyze_json({copy});
  ASSERT_EQ(by_gpu["gpus"].size(), 4U);
  ASSERT_EQ(by_cursor["gpus"].size(), 4U) << "the GPU left out of devices still has samples";
  for (std::size_t g = 0; g < 4; ++g) {
    const auto& a = by_gpu["gpus"][g];
    const auto& b = by_cursor["gpus"][g];
    EXPECT_EQ(a["index"], b["index"]);
    EXPECT_EQ(a["activity"], b["activity"]) << g;
    EXPECT_EQ(a["energy_j"], b["energy_j"]) << g;
    EXPECT_EQ(a["over_time"]["sm_active_pct"], b["over_time"]["sm_active_pct"]) << g;
  }
  EXPECT_EQ(by_gpu["window"], by_cursor["window"]);
  EXPECT_EQ(by_gpu["efficiency_score"], by_cursor["efficiency_score"]);
  EXPECT_EQ(by_gpu["balance"]["stragglers"], by_cursor["balance"]["stragglers"]);
}

TEST_F(Analyze, EnergyFromTheCounterMatchesTheDatabase) {
  // With the fast power cadence, the counter and the integration both come from power_samples,
  // so they cover the same span (on a loaded machine the samples' span can differ from it).
  const auto db = profile("h100", "1", "1", {"--power-sampling-ms", "10"});
  const auto out = analyze_json({db, "--carbon-intensity", "100"});
  const double counter = out["energy_j"]["counter"].get<double>();
  const double expected =
      number(db, "SELECT (max(energy_mj) - min(energy_mj)) / 1000.0 FROM power_samples");
  EXPECT_NEAR(counter, expected, 1e-6 * expected + 1e-9);
  const double integrated = out["energy_j"]["integrated"].get<double>();
  EXPECT_NEAR(integrated, counter, 0.15 * counter);
  const double span_s = number(
      db, "SELECT (max(wall_ns) - min(wall_ns)) / 1e9 FROM power_samples WHERE energy_mj NOT NULL");
  EXPECT_NEAR(out["gpus"][0]["average_power_w"].get<double>(), counter / span_s, 1e-6 * counter);
  EXPECT_NEAR(out["carbon"]["grams"].get<double>(), counter / 3.6e6 * 100, 1e-6);

  // Without it, the counter comes from the samples.
  const auto slow = profile("a100-nogpm", "1", "1");
  const double slow_counter = analyze_json({slow})["gpus"][0]["energy_j"]["counter"].get<double>();
  const double slow_expected = number(
      slow,
      "SELECT (max(energy_mj) - min(energy_mj)) / 1000.0 FROM samples WHERE device_index = 0");
  EXPECT_NEAR(slow_counter, slow_expected, 1e-6 * slow_expected + 1e-9);
}

TEST_F(Analyze, PowerCapIsFoundAndAccounted) {
  // A 300 W cap set "by an admin" before the job: the driver state file holds it.
  auto devices = run_gpuscope({"devices", "--simulate", "h100", "--json"}, env_);
  const std::string uuid = json::parse(devices.out)["devices"][0]["uuid"];
  std::ofstream(env_["GPUSCOPE_SIM_STATE"])
      << R"({"version":1,"gpus":{")" << uuid << R"(":{"power_limit_mw":300000}}})";
  const auto db = profile("h100", "3", "4");
  const auto out = analyze_json({db});
  EXPECT_DOUBLE_EQ(out["gpus"][0]["power_limit_w"].get<double>(), 300.0);
  EXPECT_LE(out["gpus"][0]["peak_power_w"].get<double>(), 300.0 * 1.02);
  EXPECT_GT(out["gpus"][0]["throttle_s"]["power cap"].get<double>(), 0.5);
  bool said = false;
  for (const auto& f : out["findings"]) said |= f["kind"] == "power_capped";
  EXPECT_TRUE(said) << out["findings"].dump(2);
  auto text = run_gpuscope({"analyze", db});
  EXPECT_NE(text.out.find("clocks held down"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("power cap"), std::string::npos);
}

TEST_F(Analyze, A100WithoutGpmHasNoSaturationMetricsButStillAnAnswer) {
  const auto db = profile("a100-nogpm", "1", "1");
  const auto out = analyze_json({db});
  EXPECT_TRUE(out["over_both"]["sm_active_pct"].is_null());
  EXPECT_TRUE(out["efficiency_score"].is_null());
  EXPECT_FALSE(out["over_both"]["gpu_util_pct"].is_null());
  EXPECT_EQ(out["gpus"][0]["activity_metric"], "gpu_util_pct");
}

TEST_F(Analyze, TextShowsTheSections) {
  const auto db = profile("h100x4-straggler", "1", "4");
  auto r = run_gpuscope({"analyze", db, "--region", "FR"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* text : {"Over all GPUs and time", "Per GPU", "Energy and carbon", "Diagnosis",
                           "France", "power_w"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
  }
  EXPECT_EQ(r.out.find("\033["), std::string::npos) << "no colour when not on a terminal";
}

TEST_F(Analyze, CsvViews) {
  const auto db = profile("h100", "0.5", "1");
  auto both = run_gpuscope({"analyze", db, "--csv"});
  ASSERT_EQ(both.exit_code, 0) << both.err;
  EXPECT_EQ(both.out.rfind("metric,unit,count,mean,median,min,max\n", 0), 0U);
  EXPECT_NE(both.out.find("\npower_w,W,"), std::string::npos);
  auto time = run_gpuscope({"analyze", db, "--csv", "--aggregate", "time", "--metric", "power_w"});
  EXPECT_EQ(
      time.out.rfind("run,host,rank,gpu,uuid,metric,unit,count,mean,median,p5,p95,min,max\n", 0),
      0U);
  auto space =
      run_gpuscope({"analyze", db, "--csv", "--aggregate", "space", "--metric", "power_w"});
  EXPECT_EQ(space.out.rfind("metric,unit,t_s,gpus,mean,min,min_gpu,max,max_gpu\n", 0), 0U);
}

TEST_F(Analyze, WorkFromCapturedOutput) {
  const std::string db = dir_.file("work.db");
  auto r =
      run_gpuscope({"profile", "--simulate", "h100", "-q", "-o", db, "--capture-output", "--wrap",
                    "echo 'processed 100 tokens'; sleep 0.3; echo 'processed 150 tokens'"},
                   env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out =
      analyze_json({db, "--work-regex", "processed ([0-9]+) tokens", "--work-name", "token"});
  EXPECT_EQ(out["work"]["units"].get<double>(), 250.0);
  EXPECT_NEAR(out["work"]["energy_per_unit_j"].get<double>(),
              out["energy_j"]["counter"].get<double>() / 250.0, 1e-9);
}

TEST_F(Analyze, SeveralRanksAndADirectory) {
  auto env = env_;
  env["SLURM_JOB_ID"] = "99";
  env["SLURM_NTASKS"] = "2";
  for (const char* rank : {"0", "1"}) {
    env["SLURM_PROCID"] = rank;
    env["SLURMD_NODENAME"] = std::string("node") + rank;
    auto r = run_gpuscope({"profile", "--simulate", "h100x4-straggler", "-q", "-o",
                           dir_.file("ranks") + "/", "--", "sleep", "0.5"},
                          env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const auto out = analyze_json({dir_.file("ranks")});
  EXPECT_EQ(out["runs"].size(), 2U);
  EXPECT_EQ(out["gpus"].size(), 8U);
  auto text = run_gpuscope({"analyze", dir_.file("ranks")});
  EXPECT_NE(text.out.find("node1 rank 1 GPU 3"), std::string::npos) << text.out;
}

// Bad input: one clear line.
TEST_F(Analyze, MissingFile) {
  auto r = run_gpuscope({"analyze", dir_.file("nope.db")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
}

TEST_F(Analyze, NotSqlite) {
  std::ofstream(dir_.file("junk.db")) << "this is not a database";
  auto r = run_gpuscope({"analyze", dir_.file("junk.db")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not a SQLite database"), std::string::npos) << r.err;
}

TEST_F(Analyze, EmptyRunSaysSo) {
  const std::string db = dir_.file("empty.db");
  auto env = env_;
  env["CUDA_VISIBLE_DEVICES"] = "";  // the job may use no GPU: nothing is sampled
  auto r = run_gpuscope({"profile", "--simulate", "h100", "-q", "-o", db, "--", "true"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto a = run_gpuscope({"analyze", db});
  EXPECT_EQ(a.exit_code, 1);
  EXPECT_NE(a.err.find("no samples to analyze"), std::string::npos) << a.err;
}

TEST_F(Analyze, OneSampleStillAnswers) {
  const auto db = profile("h100", "0", "1");
  auto r = run_gpuscope({"analyze", db});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("GPU 0"), std::string::npos);
}

TEST_F(Analyze, BadOptions) {
  const auto db = profile("h100", "0.2", "1");
  EXPECT_EQ(run_gpuscope({"analyze", db, "--region", "XX"}).exit_code, 2);
  EXPECT_EQ(run_gpuscope({"analyze", db, "--detect-outliers", "sometimes"}).exit_code, 2);
  EXPECT_EQ(run_gpuscope({"analyze", db, "--metric", "nonsense"}).exit_code, 2);
  EXPECT_EQ(run_gpuscope({"analyze", db, "--work-regex", "no group"}).exit_code, 2);
  EXPECT_EQ(run_gpuscope({"analyze", db, "--pue", "0.5"}).exit_code, 2);
  EXPECT_EQ(run_gpuscope({"analyze"}).exit_code, 2);
}

}  // namespace
}  // namespace gpuscope::testing
