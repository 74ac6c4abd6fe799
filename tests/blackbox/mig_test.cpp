// `gpuscope profile` on GPUs in MIG mode (docs/mig.md), through the binary: each MIG device a
// device of the run with its own activity, memory and processes beside its GPU; selection by
// MIG UUID; instances that come and go; MIG UUIDs that name nothing.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/ports.hpp"
#include "support/process.hpp"
#include "support/scrape.hpp"
#include "support/sql.hpp"

namespace gpuscope::testing {
namespace {

std::string fixture(const std::string& name) {
  return std::string(GPUSCOPE_TEST_FIXTURE_SCENARIO_DIR) + "/" + name + ".json";
}

class ProfileMig : public ::testing::Test {
 protected:
  TempDir dir_;
  std::string db_ = dir_.file("run.db");
  // Unprivileged, as a job on a MIG slice is: the GPU's own process list and memory are refused.
  std::map<std::string, std::string> env_{{"GPUSCOPE_SIM_STATE", dir_.file("state.json")},
                                          {"GPUSCOPE_SIM_PRIVILEGED", "0"},
                                          {"CUDA_VISIBLE_DEVICES", "\x01"},
                                          {"SLURM_JOB_ID", "\x01"}};

  ProcessResult profile(const std::string& scenario, std::vector<std::string> options,
                        std::vector<std::string> command) {
    std::vector<std::string> args{"profile", "--simulate", fixture(scenario), "-q", "-o", db_,
                                  "-s",      "50"};
    args.insert(args.end(), options.begin(), options.end());
    args.push_back("--");
    args.insert(args.end(), command.begin(), command.end());
    return run_gpuscope(args, env_);
  }

  double mean(const std::string& metric, unsigned device) {
    return number(db_, "SELECT avg(" + metric +
                           ") FROM samples WHERE device_index = " + std::to_string(device));
  }
  std::string devices_sampled() {
    return scalar(db_,
                  "SELECT group_concat(device_index) FROM (SELECT DISTINCT device_index FROM "
                  "samples ORDER BY device_index)")
        .value_or("");
  }
};

TEST_F(ProfileMig, EachInstanceIsADeviceOfTheRunBesideItsGpu) {
  auto r = profile("h100-mig-mixed", {}, {"sleep", "1.2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(scalar(db_, "SELECT status FROM runs"), "finished");
  EXPECT_EQ(devices_sampled(), "0,1001,1003,1007");
  EXPECT_EQ(scalar(db_,
                   "SELECT group_concat(device_index) FROM (SELECT device_index FROM "
                   "devices ORDER BY device_index)"),
            "0,1001,1003,1007");
  EXPECT_EQ(scalar(db_, "SELECT uuid FROM devices WHERE device_index = 1003"),
            "MIG-b1000000-0000-5000-8000-000000000022");
  // Each instance's own activity (the scenario's levels) and memory.
  const struct {
    unsigned index;
    double sm_active, util, used_gib;
  } want[] = {{1001, 85, 95, 34}, {1003, 35, 50, 15}, {1007, 15, 25, 3}};
  for (const auto& w : want) {
    SCOPED_TRACE(w.index);
    EXPECT_NEAR(mean("sm_active_pct", w.index), w.sm_active, 1.0);
    EXPECT_NEAR(mean("graphics_active_pct", w.index), w.util, 1.0);
    EXPECT_NEAR(mean("memory_used_bytes", w.index) / (1ULL << 30U), w.used_gib, 0.01);
    // Power, temperature and clocks are the GPU's: absent, never zero.
    EXPECT_EQ(
        number(db_, "SELECT count(*) FROM samples WHERE device_index = " + std::to_string(w.index) +
                        " AND (power_w IS NOT NULL OR temperature_c IS NOT NULL OR "
                        "sm_clock_mhz IS NOT NULL OR gpu_util_pct IS NOT NULL)"),
        0);
  }
  EXPECT_GT(mean("power_w", 0), 0);
  EXPECT_EQ(number(db_, "SELECT count(*) FROM power_samples WHERE device_index <> 0"), 0);
  // Processes on their instance, read from each MIG device (the GPU's list needs root).
  EXPECT_EQ(scalar(db_,
                   "SELECT group_concat(pid || ':' || device_index) FROM (SELECT DISTINCT pid, "
                   "device_index FROM process_samples ORDER BY pid)"),
            "51101:1001,51202:1003,51203:1003,51307:1007");
  EXPECT_EQ(number(db_, "SELECT count(*) FROM events WHERE kind = 'mig_instance'"), 0);
}

TEST_F(ProfileMig, AnA100sInstancesTakeDcgmsGpuInstanceEntities) {
  env_["GPUSCOPE_SIM_PRIVILEGED"] = "1";  // embedded DCGM needs root on a GPU in MIG mode
  auto r = profile("a100-mig-mixed", {}, {"sleep", "1.2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(devices_sampled(), "0,1001,1003,1007,1008");
  // Each instance's own SM activity (the scenario's levels), from DCGM.
  const std::pair<unsigned, double> want[] = {{1001, 80}, {1003, 40}, {1007, 12}, {1008, 0}};
  for (const auto& [index, sm_active] : want) {
    SCOPED_TRACE(index);
    EXPECT_NEAR(mean("sm_active_pct", index), sm_active, 1.0);
    EXPECT_EQ(scalar(db_, "SELECT saturation_source FROM devices WHERE device_index = " +
                              std::to_string(index)),
              "dcgm");
  }
}

TEST_F(ProfileMig, AnA100UnprivilegedWithoutAHostEngineSaysDcgmNeedsRoot) {
  std::vector<std::string> args{
      "profile", "--simulate", fixture("a100-mig-mixed"), "-o", db_, "-s", "50", "--",
      "sleep",   "0.3"};
  auto r = run_gpuscope(args, env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("DCGM_ST_REQUIRES_ROOT"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("run gpuscope as root"), std::string::npos) << r.err;
  EXPECT_EQ(number(db_, "SELECT count(*) FROM samples WHERE sm_active_pct IS NOT NULL"), 0);
}

TEST_F(ProfileMig, AMigUuidSamplesThatInstanceAndItsGpuOnly) {
  const std::string uuid = "MIG-b1000000-0000-5000-8000-000000000022";
  auto r = profile("h100-mig-mixed", {"--gpus", uuid}, {"sleep", "0.6"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(devices_sampled(), "0,1003");
  EXPECT_EQ(number(db_, "SELECT count(*) FROM devices"), 2);
  EXPECT_NEAR(mean("sm_active_pct", 1003), 35, 1.0);
  EXPECT_EQ(scalar(db_, "SELECT group_concat(DISTINCT device_index) FROM process_samples"), "1003");
  EXPECT_NE(r.err.find(uuid + " is MIG device GPU 0 GI 3 (2g.20gb)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("GPU 0's other MIG devices are not sampled"), std::string::npos) << r.err;
}

TEST_F(ProfileMig, CudaVisibleDevicesByMigUuidIsTheSame) {
  env_["CUDA_VISIBLE_DEVICES"] = "MIG-b1000000-0000-5000-8000-000000000013";
  auto r = profile("h100-mig-mixed", {}, {"sleep", "0.4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(devices_sampled(), "0,1007");
}

TEST_F(ProfileMig, InstancesComingAndGoingAreEventsAndNothingIsLost) {
  env_["GPUSCOPE_SIM_TIME_SCALE"] = "10";  // the 6 s change comes after 0.6 s
  auto r = profile("h100-mig-churn", {}, {"sleep", "1.8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(scalar(db_, "SELECT status FROM runs"), "finished");
  EXPECT_EQ(number(db_, "SELECT count(*) FROM events WHERE kind = 'gpu_lost'"), 0);
  EXPECT_EQ(scalar(db_,
                   "SELECT group_concat(device_index || ': ' || detail, ' | ') FROM events "
                   "WHERE kind = 'mig_instance' AND detail LIKE '%is gone%'"),
            "1001: MIG device GPU 0 GI 1 (3g.40gb) is gone (its GPU instance was destroyed, or "
            "its GPU lost); no more samples from it");
  EXPECT_EQ(number(db_,
                   "SELECT count(*) FROM events WHERE kind = 'mig_instance' AND detail LIKE "
                   "'MIG device GPU 0 GI 3 (2g.20gb) appeared%'"),
            1);
  // The GPU and the lasting instance were sampled to the end; the one that went, not after.
  const double end = number(db_, "SELECT max(mono_ns) FROM samples");
  const double gone = number(db_, "SELECT mono_ns FROM events WHERE detail LIKE '%is gone%'");
  EXPECT_GT(number(db_, "SELECT max(mono_ns) FROM samples WHERE device_index = 0"), end - 2e8);
  EXPECT_GT(number(db_, "SELECT max(mono_ns) FROM samples WHERE device_index = 1007"), end - 2e8);
  EXPECT_LT(number(db_, "SELECT max(mono_ns) FROM samples WHERE device_index = 1001"), gone);
  EXPECT_LT(gone, end - 5e8);
  // analyze's diagnosis tells both, in time order, with when.
  auto a = run_gpuscope({"analyze", "--json", db_});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto json = nlohmann::json::parse(a.out);
  std::vector<std::string> changes;
  for (const auto& f : json.at("findings")) {
    if (f.at("kind") == "mig_changed") changes.push_back(f.at("text"));
  }
  ASSERT_EQ(changes.size(), 2U) << a.out;
  EXPECT_NE(changes[0].find("GPU 0 GI 1 (3g.40gb) is gone"), std::string::npos) << changes[0];
  EXPECT_NE(changes[0].find("(at 0.6 s)"), std::string::npos) << changes[0];
  EXPECT_NE(changes[1].find("GPU 0 GI 3 (2g.20gb) appeared"), std::string::npos) << changes[1];
}

TEST_F(ProfileMig, MigModeTurnedOffDuringTheRunIsOneEventAndTheGpuGoesOn) {
  env_["GPUSCOPE_SIM_TIME_SCALE"] = "10";  // MIG mode goes off 0.6 s in
  auto r = profile("h100-mig-off", {}, {"sleep", "1.8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(scalar(db_, "SELECT status FROM runs"), "finished");
  EXPECT_EQ(number(db_, "SELECT count(*) FROM events WHERE kind = 'gpu_lost'"), 0);
  EXPECT_EQ(scalar(db_,
                   "SELECT group_concat(detail, ' | ') FROM events WHERE kind = 'mig_instance' "
                   "AND detail LIKE 'GPU 0: MIG mode%'"),
            "GPU 0: MIG mode turned off during the run (it was on at the start); the MIG devices "
            "sampled are those present at the start");
  EXPECT_EQ(number(db_,
                   "SELECT count(*) FROM events WHERE kind = 'mig_instance' AND detail LIKE "
                   "'%is gone%'"),
            2);
  // Both instances were sampled until then; the GPU to the end.
  const double end = number(db_, "SELECT max(mono_ns) FROM samples");
  EXPECT_GT(number(db_, "SELECT max(mono_ns) FROM samples WHERE device_index = 0"), end - 2e8);
  EXPECT_GT(number(db_, "SELECT count(*) FROM samples WHERE device_index = 1001"), 3);
  EXPECT_LT(number(db_, "SELECT max(mono_ns) FROM samples WHERE device_index = 1007"), end - 5e8);
  // analyze reads the run and says what happened.
  auto a = run_gpuscope({"analyze", db_});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.out.find("MIG mode turned off during the run"), std::string::npos) << a.out;
}

TEST_F(ProfileMig, AMigUuidThatDoesNotExistIsAUsageErrorNamingIt) {
  const std::string marker = dir_.file("ran");
  auto r = profile("h100-mig-mixed", {"--gpus", "MIG-b1000000-0000-5000-8000-0000000000ff"},
                   {"touch", marker});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("no GPU has the MIG device MIG-b1000000-0000-5000-8000-0000000000ff"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST_F(ProfileMig, MigOnWithoutInstancesSamplesTheGpu) {
  auto r = profile("h100-mig-empty", {}, {"sleep", "0.3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(devices_sampled(), "0");
}

TEST_F(ProfileMig, AnalyzeListsInstancesWithEstimatedSharesOfTheMeasuredEnergy) {
  auto r = profile("h100-mig-mixed", {}, {"sleep", "1.5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto text = run_gpuscope({"analyze", db_}, env_);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("1 run · 1 GPU · 3 MIG instances"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("└ GPU 0 GI 1 (4g.40gb)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("est. "), std::string::npos);
  EXPECT_NE(text.out.find("GPU 0 GI 3  51202"), std::string::npos) << "processes by instance";
  auto json_run = run_gpuscope({"analyze", db_, "--json"}, env_);
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
  const auto a = nlohmann::json::parse(json_run.out);
  ASSERT_EQ(a["gpus"].size(), 4u);
  const auto& parent = a["gpus"][0];
  const double measured = parent["energy_j"]["counter"].get<double>();
  ASSERT_GT(measured, 0);
  // The scenario's instances: slices × SM active of 4 × 0.85, 2 × 0.35 and 1 × 0.15.
  const std::map<unsigned, double> weight{{1001, 3.4}, {1003, 0.7}, {1007, 0.15}};
  double estimated = 0;
  for (std::size_t k = 1; k < 4; ++k) {
    const auto& g = a["gpus"][k];
    const unsigned index = g["index"].get<unsigned>();
    ASSERT_TRUE(g["energy_j"]["counter"].is_null()) << "an instance's energy is never measured";
    ASSERT_TRUE(g["estimated"]["estimate"].get<bool>());
    const double share = g["estimated"]["energy_j"].get<double>() / measured;
    EXPECT_NEAR(share, weight.at(index) / 4.25, 0.03) << g["label"];
    estimated += g["estimated"]["energy_j"].get<double>();
  }
  EXPECT_NEAR(estimated + parent["mig_split"]["unattributed_j"].get<double>(), measured,
              1e-6 * measured);
  EXPECT_NEAR(a["energy_j"]["counter"].get<double>(), measured, 1e-9)
      << "the totals are the GPU's measured energy, the estimates not added";
  EXPECT_FALSE(a["mig_balance"].is_null());
  auto report = run_gpuscope({"report", db_, "-o", dir_.file("r.html")}, env_);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_GT(std::filesystem::file_size(dir_.file("r.html")), 10000u);  // lanes: tests/report
}

TEST_F(ProfileMig, AnAmpereGpusInstancesHaveTheirMemoryAndProcesses) {
  auto r = profile("a100-mig-mixed", {}, {"sleep", "0.6"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string devices = devices_sampled();
  EXPECT_NE(devices.find("0,10"), std::string::npos) << devices;
  EXPECT_EQ(number(db_, "SELECT count(*) FROM devices WHERE parent_index = 0"), 4);
  EXPECT_GT(number(db_,
                   "SELECT count(*) FROM samples WHERE device_index >= 1000 AND "
                   "memory_used_bytes > 0"),
            0);
  EXPECT_EQ(number(db_,
                   "SELECT count(*) FROM samples WHERE device_index >= 1000 AND "
                   "power_w IS NOT NULL"),
            0)
      << "power is the GPU's";
}

// GI 1's SM activity as dcgm-exporter labels a GPU instance's series: under its GPU.
const std::string kInstanceSm =
    "DCGM_FI_PROF_SM_ACTIVE{gpu=\"0\",UUID=\"GPU-b1000000-0000-4000-8000-000000000001\","
    "pci_bus_id=\"00000000:18:00.0\",device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\","
    "GPU_I_PROFILE=\"4g.40gb\",GPU_I_ID=\"1\"";

TEST(ServeMig, InstancesAreServedUnderTheirGpuWithDcgmExportersLabels) {
  TempDir dir;
  const int port = free_port();
  auto serve =
      start_gpuscope({"serve", "--simulate", fixture("h100-mig-mixed"), "--naming", "dcgm",
                      "--listen", "127.0.0.1:" + std::to_string(port), "--interval", "200"},
                     {{"GPUSCOPE_SIM_STATE", dir.file("state.json")}}, dir.file("serve.out"),
                     dir.file("serve.err"));
  const std::string page = metrics_when(
      port, [](const std::string& p) { return p.find(kInstanceSm) != std::string::npos; },
      std::chrono::seconds(60));
  ASSERT_FALSE(page.empty()) << read_file(dir.file("serve.err"));
  EXPECT_NE(page.find(kInstanceSm), std::string::npos) << page;
  std::size_t power = 0;
  for (auto at = page.find("\nDCGM_FI_DEV_POWER_USAGE{"); at != std::string::npos;
       at = page.find("\nDCGM_FI_DEV_POWER_USAGE{", at + 1)) {
    ++power;
  }
  EXPECT_EQ(power, 1u) << "the GPU's power once, never repeated per instance";
  EXPECT_NE(read_file(dir.file("serve.err")).find("serving 1 GPU and 3 MIG instances"),
            std::string::npos);
}

TEST(MonitorMig, MigDevicesAreRowsUnderTheirGpu) {
  TempDir dir;
  auto r = run_gpuscope({"monitor", "--once", "--simulate", fixture("h100-mig-mixed")},
                        {{"GPUSCOPE_SIM_STATE", dir.file("state.json")}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto gpu = r.out.find("\n0 ");
  const auto gi1 = r.out.find("\n└1 ");
  const auto gi7 = r.out.find("\n└7 ");
  ASSERT_NE(gpu, std::string::npos) << r.out;
  ASSERT_NE(gi1, std::string::npos) << r.out;
  ASSERT_NE(gi7, std::string::npos) << r.out;
  EXPECT_LT(gpu, gi1);
  EXPECT_LT(gi1, gi7);
  // GI 1's own SM activity and memory; power is the GPU's.
  const std::string row = r.out.substr(gi1 + 1, r.out.find('\n', gi1 + 1) - gi1 - 1);
  EXPECT_NE(row.find("85%"), std::string::npos) << row;
  EXPECT_NE(row.find("34.0 / 40 GiB"), std::string::npos) << row;
  EXPECT_NE(row.find("- / -"), std::string::npos) << row;
}

}  // namespace
}  // namespace gpuscope::testing
