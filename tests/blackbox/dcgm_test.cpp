// The DCGM metric source through the binary (docs/sources.md): the simulated libdcgm loaded
// through the same path as NVIDIA's, on the shipped a100-dcgm scenario and variants of it with
// each of DCGM's faults. Every command (devices, profile, analyze, report, monitor, sweep, merge,
// export) gets the saturation metrics of an A100 from DCGM; serve is covered with a real
// Prometheus in tests/integration/export_servers_test.cpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "support/process.hpp"
#include "support/sql.hpp"

namespace gpuscope::testing {
namespace {

using nlohmann::json;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

// The mean of `metric` over one GPU's samples.
std::string mean_sql(const std::string& metric, int gpu) {
  return "SELECT avg(" + metric + ") FROM samples WHERE device_index = " + std::to_string(gpu);
}

class Dcgm : public ::testing::Test {
 protected:
  TempDir dir_;
  std::map<std::string, std::string> env_{{"GPUSCOPE_SIM_STATE", dir_.file("state.json")},
                                          {"GPUSCOPE_SIM_TIME_SCALE", "8"}};

  // The shipped a100-dcgm with its "dcgm" object replaced by `dcgm` (and `model` for its GPUs).
  std::string variant(const std::string& name, const std::string& dcgm,
                      const std::string& model = "A100-SXM4-80GB") {
    std::string text = read_text(std::string(GPUSCOPE_TEST_SCENARIO_DIR) + "/a100-dcgm.json");
    const std::string original = R"("dcgm": {"hostengine": "localhost:5555"})";
    text.replace(text.find(original), original.size(), R"("dcgm": )" + dcgm);
    const std::string a100 = "A100-SXM4-80GB";
    text.replace(text.find(a100, text.find("\"gpus\"")), a100.size(), model);
    const std::string path = dir_.file(name + ".json");
    std::ofstream(path) << text;
    return path;
  }

  // Profiles `scenario` for `seconds` (8 scenario seconds each: idle, warm-up, compute).
  ProcessResult profile(const std::string& scenario, const std::string& db,
                        std::vector<std::string> extra = {}, const std::string& seconds = "1") {
    std::vector<std::string> args{"profile", "--simulate", scenario, "-q", "-o", db};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--", "sleep", seconds});
    return run_gpuscope(args, env_);
  }
};

TEST_F(Dcgm, DevicesListsTheSaturationMetricsAsSupportedViaDcgm) {
  auto r = run_gpuscope({"devices", "--simulate", "a100-dcgm", "--json"}, env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = json::parse(r.out);
  ASSERT_EQ(out["devices"].size(), 4U);
  for (const auto& d : out["devices"]) {
    EXPECT_EQ(d["saturation"]["source"], "dcgm");
    EXPECT_EQ(d["saturation"]["detail"], "nv-hostengine at localhost:5555; no GPM on this GPU");
    EXPECT_FALSE(d["capabilities"]["gpm"]["supported"].get<bool>());
    ASSERT_TRUE(d["capabilities"].contains("dcgm"));
    EXPECT_TRUE(d["capabilities"]["dcgm"]["supported"].get<bool>());
    const std::string label = d["capabilities"]["dcgm"]["label"];
    for (const char* metric : {"sm_active_pct", "sm_occupancy_pct", "tensor_active_pct",
                               "dram_active_pct", "fp64_active_pct", "fp32_active_pct",
                               "fp16_active_pct", "pcie_tx_bytes_per_s", "nvlink_rx_bytes_per_s"}) {
      EXPECT_NE(label.find(metric), std::string::npos) << metric << " in " << label;
    }
  }
  auto text = run_gpuscope({"devices", "--simulate", "a100-dcgm"}, env_);
  EXPECT_NE(text.out.find("Saturation    DCGM (nv-hostengine at localhost:5555"), std::string::npos)
      << text.out;
}

TEST_F(Dcgm, WithoutDcgmTheA100KeepsItsMeaning) {
  auto r = run_gpuscope({"devices", "--simulate", "a100-nogpm", "--json"}, env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json listed = json::parse(r.out);
  for (const auto& d : listed["devices"]) {
    EXPECT_TRUE(d["saturation"]["source"].is_null());
    EXPECT_NE(d["saturation"]["detail"].get<std::string>().find("no GPM on this GPU"),
              std::string::npos);
    EXPECT_FALSE(d["capabilities"].contains("dcgm"));
  }
  // analyze says why the saturation figures and the score are missing.
  const std::string db = dir_.file("nogpm.db");
  ASSERT_EQ(profile("a100-nogpm", db).exit_code, 0);
  auto analyzed = run_gpuscope({"analyze", db});
  EXPECT_NE(analyzed.out.find("no saturation metrics (no GPM on this GPU, and DCGM"),
            std::string::npos)
      << analyzed.out;
  // Asking for DCGM where there is none is an error before anything runs.
  const std::string marker = dir_.file("ran");
  auto asked = run_gpuscope({"profile", "--simulate", "a100-nogpm", "--metrics-source", "dcgm",
                             "-o", dir_.file("x.db"), "--", "touch", marker},
                            env_);
  EXPECT_EQ(asked.exit_code, 2);
  EXPECT_NE(asked.err.find("--metrics-source dcgm: DCGM did not initialise"), std::string::npos)
      << asked.err;
  EXPECT_FALSE(std::filesystem::exists(marker));
  auto bad = run_gpuscope({"devices", "--simulate", "a100-dcgm", "--metrics-source", "dcmg"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--metrics-source"), std::string::npos) << bad.err;
}

TEST_F(Dcgm, ProfileAnalyzeReportShowTheSaturationMetrics) {
  const std::string db = dir_.file("a100.db");
  auto r = profile("a100-dcgm", db, {"-s", "100"}, "2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("saturation metrics of GPUs 0-3 from DCGM (nv-hostengine at "
                       "localhost:5555; no GPM on this GPU)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(number(db, "SELECT count(*) FROM devices WHERE saturation_source = 'dcgm'"), 4);
  const double rows = number(db, "SELECT count(*) FROM samples");
  const double with = number(db, "SELECT count(*) FROM samples WHERE sm_active_pct NOT NULL");
  EXPECT_GT(with, 0.8 * rows) << "DCGM answers at the sampling interval";
  // Units: percent, and bytes per second.
  EXPECT_LE(number(db, "SELECT max(sm_active_pct) FROM samples"), 100.0);
  EXPECT_GT(number(db, "SELECT max(sm_active_pct) FROM samples"), 50.0);
  EXPECT_GT(number(db, "SELECT max(nvlink_tx_bytes_per_s) FROM samples"), 1e9);

  auto analyzed = run_gpuscope({"analyze", "--json", db});
  ASSERT_EQ(analyzed.exit_code, 0) << analyzed.err;
  const auto out = json::parse(analyzed.out);
  for (const char* metric :
       {"sm_active_pct", "sm_occupancy_pct", "tensor_active_pct", "dram_active_pct"}) {
    ASSERT_FALSE(out["over_both"][metric].is_null()) << metric;
    EXPECT_GT(out["over_both"][metric]["count"].get<double>(), 0) << metric;
    EXPECT_GT(out["over_both"][metric]["mean"].get<double>(), 5.0) << metric;
    EXPECT_NEAR(out["over_both"][metric]["max"].get<double>(),
                number(db, std::string("SELECT max(") + metric + ") FROM samples"), 1e-9)
        << metric;
  }
  EXPECT_FALSE(out["efficiency_score"].is_null());
  EXPECT_EQ(out["gpus"][0]["activity_metric"], "sm_active_pct");
  EXPECT_EQ(out["gpus"][0]["saturation_source"], "dcgm");
  ASSERT_EQ(out["notes"].size(), 1U) << out["notes"].dump();
  EXPECT_EQ(out["notes"][0],
            "GPU 0, GPU 1, GPU 2, GPU 3: saturation metrics from DCGM "
            "(nv-hostengine at localhost:5555; no GPM on this GPU)");

  const std::string html = dir_.file("report.html");
  auto report = run_gpuscope({"report", db, "-o", html});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const std::string page = read_text(html);
  EXPECT_NE(page.find("sm_active_pct"), std::string::npos);
  EXPECT_NE(page.find("tensor_active_pct"), std::string::npos);
  // The static plots: the heatmap is of SM active when the run has it.
  auto plot = run_gpuscope({"report", db, "--format", "png", "-o", dir_.file("plots")});
  ASSERT_EQ(plot.exit_code, 0) << plot.err;
  EXPECT_GT(std::filesystem::file_size(dir_.file("plots-heatmap.png")), 1000U);
}

TEST_F(Dcgm, GpmOnlyLeavesTheA100Empty) {
  const std::string db = dir_.file("gpm.db");
  auto r = profile("a100-dcgm", db, {"--metrics-source", "gpm"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(number(db, "SELECT count(*) FROM samples WHERE sm_active_pct NOT NULL"), 0);
  EXPECT_EQ(number(db, "SELECT count(*) FROM devices WHERE saturation_source IS NULL"), 4);
  EXPECT_NE(r.err.find("--metrics-source gpm leaves DCGM out"), std::string::npos) << r.err;
}

TEST_F(Dcgm, HopperTakesGpmByDefaultAndDcgmOnRequestWithTheSameFigures) {
  // The cross-check of docs/sources.md: one gpuscope on GPM wraps another on DCGM, so both
  // sample the same GPUs over the same seconds.
  const std::string h100 = variant("h100-dcgm", R"({"hostengine": true})", "H100-SXM5-80GB");
  const std::string gpm = dir_.file("gpm.db");
  const std::string dcgm = dir_.file("dcgm.db");
  auto r =
      run_gpuscope({"profile", "--simulate", h100, "-o", gpm, "--", GPUSCOPE_TEST_BINARY, "profile",
                    "--simulate", h100, "--metrics-source", "dcgm", "-o", dcgm, "--", "sleep", "3"},
                   env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("saturation metrics of GPUs 0-3 from GPM (Hopper or newer)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("from DCGM (nv-hostengine at localhost:5555; --metrics-source dcgm)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(number(gpm, "SELECT count(*) FROM devices WHERE saturation_source = 'gpm'"), 4);
  EXPECT_EQ(number(dcgm, "SELECT count(*) FROM devices WHERE saturation_source = 'dcgm'"), 4);
  for (const char* metric : {"sm_active_pct", "tensor_active_pct", "dram_active_pct",
                             "fp32_active_pct", "nvlink_tx_bytes_per_s"}) {
    for (int gpu = 0; gpu < 4; ++gpu) {
      const std::string sql = mean_sql(metric, gpu);
      const double a = number(gpm, sql);
      const double b = number(dcgm, sql);
      EXPECT_GT(a, 0) << metric;
      EXPECT_NEAR(a, b, 0.02 * a) << metric << " GPU " << gpu;
    }
  }
}

TEST_F(Dcgm, EmbeddedWhenNoHostEngineRuns) {
  const std::string db = dir_.file("embedded.db");
  auto r = profile(variant("embedded", "{}"), db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("from DCGM (embedded in gpuscope"), std::string::npos) << r.err;
  EXPECT_GT(number(db, "SELECT count(*) FROM samples WHERE sm_active_pct NOT NULL"), 0);
}

TEST_F(Dcgm, EmbeddedBesideAHostEngineIsRefusedWithTheWayOut) {
  const std::string db = dir_.file("beside.db");
  auto r = profile("a100-dcgm", db, {"--dcgm", "embedded"});
  ASSERT_EQ(r.exit_code, 0) << r.err << " (a refused source is not a failed job)";
  EXPECT_NE(r.err.find("DCGM refused to watch it"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--dcgm auto"), std::string::npos) << r.err;
  EXPECT_EQ(number(db, "SELECT count(*) FROM samples WHERE sm_active_pct NOT NULL"), 0);
  EXPECT_GT(number(db, "SELECT count(*) FROM samples WHERE power_w NOT NULL"), 0);
}

TEST_F(Dcgm, UnreachableDcgmLeavesTheMetricsEmptyAndSaysWhy) {
  const std::string db = dir_.file("unreachable.db");
  auto r = profile(variant("unreachable", R"({"embedded": false})"), db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("DCGM is installed but gpuscope cannot reach it"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("no nv-hostengine at localhost:5555"), std::string::npos) << r.err;
  const std::string detail =
      scalar(db, "SELECT saturation_detail FROM devices LIMIT 1").value_or("");
  EXPECT_NE(detail.find("cannot reach it"), std::string::npos) << detail;
  // A named host engine that is not there: the same, naming it.
  auto named = profile("a100-dcgm", dir_.file("named.db"), {"--dcgm", "10.0.0.9:5555"});
  EXPECT_NE(named.err.find("no nv-hostengine at 10.0.0.9:5555"), std::string::npos) << named.err;
}

TEST_F(Dcgm, ProfilingModuleMissingAndFieldGroupsRefused) {
  auto missing =
      profile(variant("module", R"({"profiling": "module_missing"})"), dir_.file("module.db"));
  ASSERT_EQ(missing.exit_code, 0) << missing.err;
  EXPECT_NE(missing.err.find("DCGM offers no profiling metrics on it"), std::string::npos)
      << missing.err;
  EXPECT_NE(missing.err.find("MODULE_NOT_LOADED"), std::string::npos) << missing.err;
  auto refused =
      profile(variant("refused", R"({"refuse_field_groups": true})"), dir_.file("refused.db"));
  ASSERT_EQ(refused.exit_code, 0) << refused.err;
  EXPECT_NE(refused.err.find("DCGM refused to watch it: dcgmFieldGroupCreate"), std::string::npos)
      << refused.err;
  EXPECT_EQ(
      number(dir_.file("refused.db"), "SELECT count(*) FROM samples WHERE sm_active_pct NOT NULL"),
      0);
}

TEST_F(Dcgm, MultiPassRefusalKeepsWhatOnePassGives) {
  const std::string db = dir_.file("multipass.db");
  auto r = profile(variant("multipass", R"({"multipass": true})"), db, {}, "2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("DCGM cannot collect fp64_active_pct, fp16_active_pct in the same pass"),
            std::string::npos)
      << r.err;
  EXPECT_GT(number(db, "SELECT count(*) FROM samples WHERE sm_active_pct NOT NULL"), 0);
  EXPECT_GT(number(db, "SELECT count(*) FROM samples WHERE tensor_active_pct NOT NULL"), 0);
  EXPECT_EQ(number(db, "SELECT count(*) FROM samples WHERE fp64_active_pct NOT NULL"), 0);
  EXPECT_EQ(number(db, "SELECT count(*) FROM samples WHERE fp16_active_pct NOT NULL"), 0);
}

TEST_F(Dcgm, CountersTakenByAProfilerAreAnEventAndNullsNotAFailure) {
  // Another profiler holds the counters from scenario second 8 to 16 (1 to 2 s of wall time).
  const std::string db = dir_.file("taken.db");
  auto r = profile(variant("taken", R"({"hostengine": true, "counters_taken":
                                        [{"from_s": 8, "to_s": 16}]})"),
                   db, {"-s", "100"}, "3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(number(db,
                   "SELECT count(*) FROM events WHERE kind = 'metrics_source' AND detail "
                   "LIKE '%held elsewhere%'"),
            4);
  EXPECT_EQ(number(db,
                   "SELECT count(*) FROM events WHERE kind = 'metrics_source' AND detail "
                   "LIKE '%are back'"),
            4);
  const double start = number(db, "SELECT min(mono_ns) FROM samples");
  const std::string in_window = "SELECT count(*) FROM samples WHERE mono_ns BETWEEN " +
                                std::to_string(start + 1.2e9) + " AND " +
                                std::to_string(start + 1.8e9);
  EXPECT_GT(number(db, in_window), 0);
  EXPECT_EQ(number(db, in_window + " AND sm_active_pct NOT NULL"), 0);
  EXPECT_GT(number(db, "SELECT count(*) FROM samples WHERE sm_active_pct NOT NULL AND mono_ns > " +
                           std::to_string(start + 2.3e9)),
            0);
  auto analyzed = run_gpuscope({"analyze", db});
  ASSERT_EQ(analyzed.exit_code, 0) << analyzed.err;
}

TEST_F(Dcgm, MonitorSweepMergeAndExportOnDcgm) {
  auto once = run_gpuscope({"monitor", "--once", "--json", "--simulate", "a100-dcgm"}, env_);
  ASSERT_EQ(once.exit_code, 0) << once.err;
  const json snapshot = json::parse(once.out);
  for (const auto& gpu : snapshot["gpus"]) {
    EXPECT_TRUE(gpu.contains("sm_active_pct") && gpu["sm_active_pct"].is_number()) << gpu.dump();
  }
  const std::string sweep = dir_.file("sweep.db");
  auto swept = run_gpuscope(
      {"sweep", "--simulate", "a100-dcgm", "--gpus", "0", "--power-limits", "300:400:100",
       "--settle", "0.05", "-s", "100", "-o", sweep, "--", "sleep", "0.6"},
      env_);
  ASSERT_EQ(swept.exit_code, 0) << swept.err;
  EXPECT_EQ(number(sweep,
                   "SELECT count(DISTINCT run_id) FROM devices WHERE saturation_source "
                   "= 'dcgm'"),
            2);
  EXPECT_EQ(number(sweep,
                   "SELECT count(DISTINCT run_id) FROM samples WHERE sm_active_pct NOT "
                   "NULL"),
            2);
  const std::string a = dir_.file("a.db");
  ASSERT_EQ(profile("a100-dcgm", a).exit_code, 0);
  const std::string merged = dir_.file("merged.db");
  auto merge = run_gpuscope({"merge", merged, a});
  ASSERT_EQ(merge.exit_code, 0) << merge.err;
  EXPECT_EQ(number(merged, "SELECT count(*) FROM devices WHERE saturation_source = 'dcgm'"), 4);
  // The Perfetto trace has a counter track of SM active per GPU.
  const std::string trace = dir_.file("trace.json");
  auto exported = run_gpuscope({"export", "--perfetto", trace, a});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  std::size_t sm_values = 0;
  std::set<std::string> names;
  const json events = json::parse(read_text(trace))["traceEvents"];
  for (const auto& e : events) {
    if (e.value("ph", "") != "C") continue;
    names.insert(e.value("name", ""));
    if (e.value("name", "") == "GPU 2 sm_active_pct") ++sm_values;
  }
  EXPECT_GT(sm_values, 0U) << json(names).dump();
}

}  // namespace
}  // namespace gpuscope::testing
