// `profile`, `analyze` and `monitor` on AMD GPUs through the binary: the simulated MI300X and
// MI250X nodes through AMD SMI and ROCm SMI, a node with both vendors, the energy accumulator
// across a 32-bit wrap and a GPU reset, and the GPUs ROCm's variables leave to the job.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "support/process.hpp"
#include "support/sql.hpp"

namespace gpuscope::testing {
namespace {

using nlohmann::json;

std::string fixture(const std::string& name) {
  return std::string(GPUSCOPE_TEST_FIXTURE_SCENARIO_DIR) + "/" + name + ".json";
}

class AmdProfile : public ::testing::Test {
 protected:
  TempDir dir_;
  std::string db_ = dir_.file("run.db");
  std::map<std::string, std::string> env_ = simulated_node_env(dir_.file("state.json"));

  ProcessResult profile(const std::string& scenario, std::vector<std::string> options,
                        const std::string& seconds) {
    std::vector<std::string> args{"profile", "--simulate", scenario, "-q", "-o", db_, "-f"};
    args.insert(args.end(), options.begin(), options.end());
    args.insert(args.end(), {"--", "sleep", seconds});
    return run_gpuscope(args, env_);
  }

  // How many times a GPU's stored energy counter went back between two samples.
  double steps_back() const {
    return number(db_,
                  "SELECT count(*) FROM (SELECT energy_mj - lag(energy_mj) OVER (PARTITION BY "
                  "device_index ORDER BY mono_ns) AS d FROM samples) WHERE d < 0");
  }

  json analysis() {
    auto r = run_gpuscope({"analyze", "--json", db_}, env_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }
};

TEST_F(AmdProfile, Mi300xNodeIsSampledStoredAndAnalysed) {
  auto r = profile("mi300x", {"-s", "50"}, "1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(number(db_, "SELECT count(*) FROM devices WHERE vendor = 'amd'"), 8);
  EXPECT_EQ(scalar(db_, "SELECT group_concat(vendor_index) FROM devices ORDER BY device_index"),
            "0,1,2,3,4,5,6,7");
  EXPECT_EQ(scalar(db_, "SELECT name FROM devices WHERE device_index = 5"), "AMD Instinct MI300X");
  EXPECT_GE(number(db_, "SELECT count(*) FROM samples WHERE device_index = 7"), 10);
  // Every mapped column is filled; what AMD has no word for is NULL, never 0.
  EXPECT_EQ(number(db_,
                   "SELECT count(*) FROM samples WHERE power_w IS NULL OR energy_mj IS NULL OR "
                   "gpu_util_pct IS NULL OR memory_used_bytes IS NULL OR temperature_c IS NULL "
                   "OR memory_temperature_c IS NULL OR graphics_clock_mhz IS NULL OR "
                   "power_limit_w IS NULL"),
            0);
  EXPECT_EQ(number(db_,
                   "SELECT count(*) FROM samples WHERE sm_active_pct IS NOT NULL OR "
                   "mem_util_pct IS NOT NULL OR clock_event_reasons IS NOT NULL"),
            0);
  EXPECT_EQ(scalar(db_, "SELECT max(power_limit_w) FROM samples"), "750.0");
  const json a = analysis();
  ASSERT_EQ(a["gpus"].size(), 8U);
  for (const auto& g : a["gpus"]) {
    EXPECT_EQ(g["vendor"], "amd");
    EXPECT_EQ(g["activity_metric"], "gpu_util_pct");
    EXPECT_TRUE(g["score"].is_null());
    EXPECT_TRUE(g["energy_j"]["counter"].is_number());
  }
  bool named = false;
  for (const auto& note : a["notes"]) {
    named =
        named || note.get<std::string>().find("graphics activity AMD reports") != std::string::npos;
  }
  EXPECT_TRUE(named) << a["notes"];
}

TEST_F(AmdProfile, EnergyAcrossA32BitWrapEqualsThePowerIntegrated) {
  auto r = profile(fixture("amd-wrap"), {"-s", "50"}, "3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(number(db_, "SELECT count(*) FROM events WHERE kind = 'counter_reset'"), 0);
  // The stored counter never goes back (the wrap is undone where it is read).
  EXPECT_EQ(steps_back(), 0);
  const json a = analysis();
  ASSERT_EQ(a["gpus"].size(), 2U);
  for (const auto& g : a["gpus"]) {
    // The activity is the graphics activity stored (the simulated load is 100 % with noise
    // clipped at 100): within a point of the samples' mean.
    const double stored = number(db_,
                                 "SELECT avg(gpu_util_pct) FROM samples WHERE device_index "
                                 "= " +
                                     std::to_string(g["index"].get<int>()));
    EXPECT_GT(stored, 95);
    EXPECT_NEAR(g["activity"].get<double>() * 100, stored, 1.0) << g;
    const double counter = g["energy_j"]["counter"].get<double>();
    const double integrated = g["energy_j"]["integrated"].get<double>();
    EXPECT_GT(counter, 1000) << "about 700 W for 3 s";
    EXPECT_NEAR(counter, integrated, 0.02 * integrated) << g;
  }
}

TEST_F(AmdProfile, AGpuResetMidRunIsSaidAndTheCounterGoesOn) {
  auto r = profile(fixture("amd-reset"), {"-s", "20"}, "1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(number(db_, "SELECT count(*) FROM events WHERE kind = 'counter_reset'"), 1);
  const auto detail = scalar(db_, "SELECT detail FROM events WHERE kind = 'counter_reset'");
  ASSERT_TRUE(detail);
  EXPECT_NE(detail->find("went back"), std::string::npos) << *detail;
  EXPECT_EQ(steps_back(), 0);
  const auto problems = scalar(db_, "SELECT problems FROM runs");
  ASSERT_TRUE(problems);
  EXPECT_NE(problems->find("calls to the GPU library"), std::string::npos) << *problems;
}

TEST_F(AmdProfile, RocmSmiAloneGivesTheSameColumns) {
  auto r = profile(fixture("amd-rocm-only"), {"-s", "50"}, "0.5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(number(db_, "SELECT count(*) FROM devices WHERE vendor = 'amd'"), 1);
  EXPECT_GE(number(db_,
                   "SELECT count(*) FROM samples WHERE power_w IS NOT NULL AND energy_mj IS "
                   "NOT NULL AND gpu_util_pct IS NOT NULL"),
            5);
}

TEST_F(AmdProfile, Mi250xGcdsAreEightDevices) {
  auto r = profile("mi250x", {"-s", "50"}, "0.5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(number(db_, "SELECT count(DISTINCT device_index) FROM samples"), 8);
  EXPECT_EQ(scalar(db_, "SELECT max(power_limit_w) FROM samples"), "280.0");
}

TEST_F(AmdProfile, ANodeWithBothVendorsSamplesBoth) {
  auto r = profile(fixture("mixed-h100-mi300x"), {"-s", "50"}, "0.5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(scalar(db_,
                   "SELECT group_concat(vendor || ':' || coalesce(vendor_index, '-')) FROM "
                   "(SELECT * FROM devices ORDER BY device_index)"),
            "nvidia:-,amd:0,amd:1");
  EXPECT_EQ(number(db_, "SELECT count(DISTINCT device_index) FROM samples"), 3);
  // The NVIDIA GPU has its SM activity (GPM), the AMD ones have none.
  EXPECT_GT(number(db_,
                   "SELECT count(*) FROM samples WHERE device_index = 0 AND sm_active_pct "
                   "IS NOT NULL"),
            0);
  EXPECT_EQ(number(db_,
                   "SELECT count(*) FROM samples WHERE device_index > 0 AND sm_active_pct "
                   "IS NOT NULL"),
            0);
  const json a = analysis();
  ASSERT_EQ(a["gpus"].size(), 3U);
  EXPECT_EQ(a["gpus"][0]["vendor"], "nvidia");
  EXPECT_EQ(a["gpus"][2]["vendor"], "amd");
}

TEST_F(AmdProfile, RocmVariablesChooseTheGpus) {
  env_["ROCR_VISIBLE_DEVICES"] = "6,2";
  env_["HIP_VISIBLE_DEVICES"] = "1";
  auto r = profile("mi300x", {"-s", "50"}, "0.3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(scalar(db_, "SELECT group_concat(device_index) FROM devices"), "2");
  // HIP reads CUDA_VISIBLE_DEVICES on a node without NVIDIA GPUs (what SLURM sets).
  env_["ROCR_VISIBLE_DEVICES"] = "\x01";
  env_["HIP_VISIBLE_DEVICES"] = "\x01";
  env_["CUDA_VISIBLE_DEVICES"] = "3";
  r = profile("mi300x", {"-s", "50"}, "0.3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(scalar(db_, "SELECT group_concat(device_index) FROM devices"), "3");
  // A list that names no AMD GPU is refused before the job runs.
  env_["ROCR_VISIBLE_DEVICES"] = "GPU-nothing";
  r = profile("mi300x", {}, "0.3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("ROCR_VISIBLE_DEVICES: no AMD GPU is 'GPU-nothing'"), std::string::npos)
      << r.err;
}

// The processes on AMD GPUs come from AMD SMI's process list (the scenario's pids), each under
// its GPU's index; ROCm SMI has no list gpuscope uses, so it records none.
TEST_F(AmdProfile, ProcessesOnAmdGpusAreRecorded) {
  auto r = profile("mi300x", {"-s", "50", "--process-sampling-ms", "100"}, "0.5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(number(db_,
                   "SELECT count(*) FROM process_samples WHERE device_index = 0 AND pid = "
                   "7100 AND used_memory_bytes = 161061273600"),
            0);
  EXPECT_EQ(number(db_, "SELECT count(DISTINCT device_index) FROM process_samples"), 8);
  EXPECT_EQ(number(db_, "SELECT count(*) FROM processes WHERE pid = 7100"), 1);
}

TEST_F(AmdProfile, ProcessesUnderRocmSmiAlone) {
  // ROCm SMI lists the node's processes once, with which GPUs each uses and its VRAM on all of
  // them together: a process's VRAM on one GPU is known only when it uses that GPU alone.
  auto r =
      profile(fixture("amd-rocm-processes"), {"-s", "50", "--process-sampling-ms", "100"}, "0.5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(number(db_,
                   "SELECT count(*) FROM process_samples WHERE device_index = 0 AND pid = "
                   "7400 AND used_memory_bytes = 8589934592"),
            0);
  EXPECT_EQ(number(db_,
                   "SELECT count(*) FROM process_samples WHERE pid = 7400 AND device_index "
                   "= 1"),
            0);
  EXPECT_GT(number(db_,
                   "SELECT count(*) FROM process_samples WHERE pid = 7402 AND device_index "
                   "= 1 AND used_memory_bytes IS NULL"),
            0);
  EXPECT_EQ(number(db_,
                   "SELECT count(*) FROM process_samples WHERE pid = 7402 AND "
                   "used_memory_bytes IS NOT NULL"),
            0);
  EXPECT_EQ(number(db_, "SELECT count(sm_percent) FROM process_samples"), 0);  // no engine time
  EXPECT_EQ(number(db_, "SELECT count(*) FROM processes"), 2);
}

TEST_F(AmdProfile, EachProcessesShareOfTheGraphicsEngine) {
  // Two processes share an MI300X busy from 1 s on: half its graphics time each.
  auto r = profile(fixture("amd-capped"), {"-s", "50", "--process-sampling-ms", "100"}, "2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // A process's first look has no share yet; every later one has.
  EXPECT_EQ(number(db_, "SELECT count(*) FROM process_samples WHERE sm_percent IS NULL"), 2);
  const std::string busy =
      "FROM process_samples WHERE mono_ns >= (SELECT min(mono_ns) FROM "
      "process_samples) + 1300000000";
  EXPECT_GT(number(db_, "SELECT count(*) " + busy), 10);
  // Each look's share carries the timing of two calls (a few ms in 100 ms); their mean does not.
  EXPECT_NEAR(number(db_, "SELECT avg(sm_percent) " + busy), 50, 3);
  EXPECT_GT(number(db_, "SELECT min(sm_percent) " + busy), 20);
  EXPECT_LT(number(db_, "SELECT min(sm_percent) FROM process_samples"), 10);  // idle at first
}

TEST_F(AmdProfile, MonitorShowsAmdGpus) {
  auto r = run_gpuscope({"monitor", "--simulate", "mi300x", "--once", "--json"}, env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json snapshot = json::parse(r.out);
  EXPECT_NE(r.out.find("AMD Instinct MI300X"), std::string::npos) << r.out;
  EXPECT_NE(snapshot.dump().find("power_w"), std::string::npos) << r.out;
}

TEST_F(AmdProfile, AnAmdProblemBesideWorkingNvidiaGpusIsSaidAndTheH100Sampled) {
  auto r = profile(fixture("mixed-h100-amd-permission"), {"-s", "50"}, "0.5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("gpuscope: AMD GPUs not sampled: permission denied reading the AMD GPUs' "
                       "files"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(scalar(db_, "SELECT group_concat(vendor) FROM devices"), "nvidia");
  EXPECT_GT(number(db_, "SELECT count(*) FROM samples WHERE device_index = 0"), 3);
}

TEST_F(AmdProfile, AmdsOwnMetricsAreStoredAnalysedAndNullOnNvidia) {
  // Capped at 750 W while asking 900 W, with 20 GiB/s each way over XGMI.
  auto r = profile(fixture("amd-capped"), {"-s", "50"}, "2.5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(number(db_,
                   "SELECT count(*) FROM samples WHERE umc_activity_pct IS NULL OR "
                   "mm_activity_pct IS NULL OR amd_throttle_status IS NULL"),
            0);
  // The power throttler's bit (PPT0) while capped, and not before.
  EXPECT_GT(number(db_, "SELECT count(*) FROM samples WHERE amd_throttle_status = 1"), 10);
  EXPECT_GT(number(db_, "SELECT count(*) FROM samples WHERE amd_throttle_status = 0"), 3);
  // The XGMI counters: never back, and 20 GiB/s over the last second.
  EXPECT_EQ(number(db_,
                   "SELECT count(*) FROM (SELECT xgmi_read_bytes - lag(xgmi_read_bytes) OVER "
                   "(ORDER BY mono_ns) AS d FROM samples) WHERE d < 0"),
            0);
  const double rate =
      number(db_,
             "SELECT (max(xgmi_write_bytes) - min(xgmi_write_bytes)) * 1e9 / "
             "(max(mono_ns) - min(mono_ns)) FROM samples WHERE mono_ns >= (SELECT max(mono_ns) - "
             "1000000000 FROM samples)");
  EXPECT_NEAR(rate / (20480.0 * 1024 * 1024), 1.0, 0.05) << rate;
  // The analysis carries them like any metric.
  auto a = run_gpuscope({"analyze", db_}, env_);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.out.find("umc_activity_pct"), std::string::npos) << a.out;
  // An NVIDIA GPU beside AMD ones has none of them.
  auto mixed = profile(fixture("mixed-h100-mi300x"), {"-s", "50"}, "0.5");
  ASSERT_EQ(mixed.exit_code, 0) << mixed.err;
  EXPECT_EQ(number(db_,
                   "SELECT count(umc_activity_pct) + count(amd_throttle_status) FROM samples "
                   "WHERE device_index = 0"),
            0);
  EXPECT_GT(number(db_, "SELECT count(xgmi_read_bytes) FROM samples WHERE device_index = 1"), 3);
}

TEST_F(AmdProfile, AnOlderTableFormatHasNoXgmiCounters) {
  // The MI250X's metrics table (format 1.3) has the throttle bits but no XGMI counters.
  auto r = profile("mi250x", {"-s", "50", "--gpus", "0"}, "0.5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(number(db_, "SELECT count(xgmi_read_bytes) + count(xgmi_write_bytes) FROM samples"), 0);
  EXPECT_GT(number(db_, "SELECT count(amd_throttle_status) FROM samples"), 3);
}

}  // namespace
}  // namespace gpuscope::testing
