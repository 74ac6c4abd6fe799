// GPU health through the binary (docs/health.md): `profile` of simulated GPUs whose health
// degrades at known times (tests/fixtures/scenarios/health-*.json), then what the run database
// holds, what `analyze` says and what `devices` shows. The counts asserted are the scenario's.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "support/process.hpp"
#include "support/sql.hpp"

namespace gpuscope::testing {
namespace {

using nlohmann::json;

const std::string kScenarios = GPUSCOPE_TEST_FIXTURE_SCENARIO_DIR;

class Health : public ::testing::Test {
 protected:
  TempDir dir_;
  std::string db_ = dir_.file("run.db");

  // Profiles `sleep seconds` on `scenario`, its time running 4× faster than the wall clock.
  ProcessResult profile(const std::string& scenario, const std::string& seconds,
                        const std::string& health_interval = "0.25") {
    return run_gpuscope(
        {"profile", "--simulate", kScenarios + "/" + scenario + ".json", "-q", "-s", "50",
         "--health-interval", health_interval, "-o", db_, "--", "sleep", seconds},
        {{"GPUSCOPE_SIM_STATE", dir_.file("state.json")}, {"GPUSCOPE_SIM_TIME_SCALE", "4"}});
  }
  json analysis() {
    auto r = run_gpuscope({"analyze", db_, "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }
};

std::vector<std::string> findings_of(const json& a, const std::string& kind) {
  std::vector<std::string> out;
  for (const auto& f : a["findings"]) {
    if (f["kind"] == kind) out.push_back(f["text"]);
  }
  return out;
}

const json& gpu_health(const json& a, const std::string& gpu) {
  for (const auto& g : a["health"]["gpus"]) {
    if (g["gpu"] == gpu) return g;
  }
  static const json none;
  ADD_FAILURE() << "no health for " << gpu;
  return none;
}

TEST_F(Health, ADegradingGpuIsDiagnosedAndTheHealthyOneIsNot) {
  const auto r = profile("health-faults", "3.2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Faults are said on stderr as they come.
  EXPECT_NE(r.err.find("GPU 1: Xid 48"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("GPU 1: Xid 63"), std::string::npos) << r.err;

  // The run database: health rows for both GPUs, the Xids as events of GPU 1.
  EXPECT_GE(number(db_, "SELECT COUNT(*) FROM health_samples WHERE device_index = 0"), 4);
  EXPECT_GE(number(db_, "SELECT COUNT(*) FROM health_samples WHERE device_index = 1"), 4);
  const auto xids = query(db_,
                          "SELECT device_index, detail FROM events WHERE kind = 'xid' "
                          "ORDER BY mono_ns");
  ASSERT_EQ(xids.size(), 2u);
  EXPECT_EQ(xids[0][0], "1");
  EXPECT_TRUE(xids[0][1]->starts_with("Xid 48")) << *xids[0][1];
  EXPECT_TRUE(xids[1][1]->starts_with("Xid 63")) << *xids[1][1];

  const json a = analysis();
  const auto xid_findings = findings_of(a, "xid");
  ASSERT_EQ(xid_findings.size(), 2u);
  EXPECT_NE(xid_findings[0].find("GPU 1: Xid 48"), std::string::npos) << xid_findings[0];
  ASSERT_EQ(findings_of(a, "ecc_uncorrected").size(), 1u);
  EXPECT_NE(findings_of(a, "ecc_uncorrected")[0].find("GPU 1: 1 uncorrected ECC error"),
            std::string::npos);
  ASSERT_EQ(findings_of(a, "row_remap_pending").size(), 1u);
  ASSERT_EQ(findings_of(a, "ecc_corrected").size(), 1u);
  EXPECT_NE(findings_of(a, "ecc_corrected")[0].find("8 corrected ECC errors"), std::string::npos)
      << findings_of(a, "ecc_corrected")[0];
  ASSERT_EQ(findings_of(a, "pcie_replays").size(), 1u);
  EXPECT_NE(findings_of(a, "pcie_replays")[0].find("GPU 1: 72 PCIe replays"), std::string::npos)
      << findings_of(a, "pcie_replays")[0];
  // The health findings come first.
  EXPECT_EQ(a["findings"][0]["kind"], "xid");

  const json& sick = gpu_health(a, "GPU 1");
  EXPECT_EQ(sick["during_run"]["ecc_uncorrected_volatile"], 1);
  EXPECT_EQ(sick["during_run"]["ecc_corrected_volatile"], 8);
  EXPECT_EQ(sick["during_run"]["pcie_replays"], 72);
  EXPECT_EQ(sick["during_run"]["remapped_rows_uncorrectable"], 1);
  EXPECT_EQ(sick["at_end"]["row_remap_pending"], 1);
  EXPECT_EQ(sick["at_end"]["ecc_corrected_aggregate"], 20);  // 12 before the run, 8 in it
  EXPECT_EQ(sick["xids"], 2);
  const json& well = gpu_health(a, "GPU 0");
  // Its fault counters stayed still (throughput and low-utilization time grow on any GPU).
  for (const auto& [name, rise] : well["during_run"].items()) {
    if (name.starts_with("ecc_") || name.starts_with("remapped_") || name == "pcie_replays" ||
        name.ends_with("_errors")) {
      EXPECT_EQ(rise, 0) << name;
    }
  }
  EXPECT_EQ(well["during_run"].size(), sick["during_run"].size());
  EXPECT_EQ(well["xids"], 0);
  for (const auto& f : a["findings"]) {
    EXPECT_EQ(f["text"].get<std::string>().find("GPU 0"), std::string::npos) << f["text"];
  }

  const auto text = run_gpuscope({"analyze", db_});
  EXPECT_NE(text.out.find("GPU health (during the run)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("remap pending"), std::string::npos) << text.out;
}

TEST_F(Health, AGpuThatFallsOffTheBusIsHardware) {
  const auto r = profile("health-xid-lost", "2.5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json a = analysis();
  const auto xid = findings_of(a, "xid");
  ASSERT_EQ(xid.size(), 1u) << a["findings"].dump();
  EXPECT_NE(xid[0].find("GPU 0: Xid 79"), std::string::npos) << xid[0];
  EXPECT_NE(xid[0].find("before the job ended"), std::string::npos) << xid[0];
  EXPECT_NE(xid[0].find("hardware"), std::string::npos) << xid[0];
  // The Xid's finding says it: no second line for the same loss.
  EXPECT_TRUE(findings_of(a, "gpu_lost").empty());
  EXPECT_EQ(number(db_, "SELECT COUNT(*) FROM events WHERE kind = 'gpu_lost'"), 1);
}

// Several run databases at once: each run's events and health counters are read by the worker
// that reads the run's first GPU (load/run_extras.hpp), and every run's must reach the analysis,
// under its own label, whichever file a worker took.
TEST_F(Health, EachRunOfSeveralFilesKeepsItsOwnHealth) {
  ASSERT_EQ(profile("health-xid-lost", "2.5").exit_code, 0);
  const std::string lost = dir_.file("lost.db");
  std::filesystem::rename(db_, lost);
  ASSERT_EQ(profile("health-faults", "3.2").exit_code, 0);
  auto r = run_gpuscope({"analyze", lost, db_, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json a = json::parse(r.out);
  const auto xids = findings_of(a, "xid");
  ASSERT_EQ(xids.size(), 3u) << a["findings"].dump();  // Xid 79 of one run, 48 and 63 of the other
  std::size_t lost_gpu = 0, sick_gpu = 0;
  for (const auto& text : xids) {
    lost_gpu += text.find("GPU 0: Xid 79") != std::string::npos ? 1U : 0U;
    sick_gpu += text.find("GPU 1: Xid 48") != std::string::npos ||
                        text.find("GPU 1: Xid 63") != std::string::npos
                    ? 1U
                    : 0U;
  }
  EXPECT_EQ(lost_gpu, 1u) << a["findings"].dump();
  EXPECT_EQ(sick_gpu, 2u) << a["findings"].dump();
  ASSERT_EQ(findings_of(a, "pcie_replays").size(), 1u);
  // Health counters for the GPUs of both runs (one GPU in one, two in the other).
  EXPECT_EQ(a["health"]["gpus"].size(), 3u) << a["health"].dump();
  std::size_t xid_events = 0;
  for (const auto& e : a["health"]["events"]) xid_events += e["kind"] == "xid" ? 1U : 0U;
  EXPECT_EQ(xid_events, 3u) << a["health"].dump();
  // Both runs are of this host and have no rank: their GPUs are told apart by file, so that
  // each GPU's Xids are its own (the lost GPU's one is not counted on the other run's GPU 0).
  std::set<std::string> labels;
  for (const auto& g : a["health"]["gpus"]) {
    const std::string label = g["gpu"];
    labels.insert(label);
    const bool of_lost = label.find("(lost.db)") != std::string::npos;
    const bool of_faults = label.find("(run.db)") != std::string::npos;
    EXPECT_TRUE(of_lost != of_faults) << label;
    const int expected = of_lost ? 1 : (label.ends_with("GPU 1") ? 2 : 0);
    EXPECT_EQ(g["xids"], expected) << label;
  }
  EXPECT_EQ(labels.size(), 3u);
}

TEST_F(Health, HealthIntervalZeroReadsNoHealth) {
  const auto r = profile("health-faults", "2", "0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(number(db_, "SELECT COUNT(*) FROM health_samples"), 0);
  EXPECT_EQ(number(db_, "SELECT COUNT(*) FROM events WHERE kind = 'xid'"), 0);
  const json a = analysis();
  EXPECT_TRUE(a["health"]["gpus"].empty());
  EXPECT_TRUE(findings_of(a, "xid").empty());
}

TEST_F(Health, AHealthyRunSaysSoInOneLine) {
  ASSERT_EQ(run_gpuscope({"profile", "--simulate", "h100", "-q", "--health-interval", "0.2", "-o",
                          db_, "--", "sleep", "0.6"},
                         {{"GPUSCOPE_SIM_STATE", dir_.file("state.json")}})
                .exit_code,
            0);
  const auto text = run_gpuscope({"analyze", db_});
  EXPECT_NE(text.out.find("GPU health: no Xid, ECC error, row remap, PCIe replay or NVLink error "
                          "on the 1 GPU during the run"),
            std::string::npos)
      << text.out;
}

TEST_F(Health, DevicesShowsEachGpusHealthNow) {
  auto r = run_gpuscope({"devices", "--simulate", kScenarios + "/health-faults.json", "--json"},
                        {{"GPUSCOPE_SIM_STATE", dir_.file("state.json")}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  const json& h = out["devices"][1]["health"];
  EXPECT_EQ(h["ecc_enabled"], 1);
  EXPECT_EQ(h["ecc_corrected_aggregate"], 12);  // the scenario's history
  EXPECT_EQ(h["row_remap_pending"], 0);
  EXPECT_EQ(h["pcie_replays"], 0);
  r = run_gpuscope({"devices", "--simulate", kScenarios + "/health-faults.json"},
                   {{"GPUSCOPE_SIM_STATE", dir_.file("state.json")}});
  EXPECT_NE(r.out.find("Remapped rows 0 correctable, 0 uncorrectable; pending no, failed no"),
            std::string::npos)
      << r.out;
  // A GPU without ECC memory has no ECC values: absent, not 0.
  r = run_gpuscope({"devices", "--simulate", kScenarios + "/no-ecc.json", "--json"},
                   {{"GPUSCOPE_SIM_STATE", dir_.file("state2.json")}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json devices = json::parse(r.out);  // kept: `plain` refers into it
  const json& plain = devices["devices"][0]["health"];
  EXPECT_FALSE(plain.contains("ecc_enabled")) << plain.dump();
  EXPECT_FALSE(plain.contains("ecc_corrected_volatile")) << plain.dump();
}

}  // namespace
}  // namespace gpuscope::testing
