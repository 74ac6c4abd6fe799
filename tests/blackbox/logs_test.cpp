// nvidia-smi logs through the binary (docs/logs.md): a run gpuscope profiled on simulated GPUs,
// written out as nvidia-smi's --query-gpu CSV (its units, its rounding, local times in a zone)
// and read back by analyze, gives the same per-GPU means and energy; and every command takes a
// log where it takes a run database.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "support/process.hpp"
#include "support/sql.hpp"

namespace gpuscope::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const std::string kLogs = std::string(GPUSCOPE_TEST_FIXTURE_DIR) + "/logs";

class Logs : public ::testing::Test {
 protected:
  TempDir dir_;
  std::map<std::string, std::string> env_{{"GPUSCOPE_SIM_STATE", dir_.file("state.json")},
                                          {"CUDA_VISIBLE_DEVICES", "\x01"},
                                          {"SLURM_JOB_ID", "\x01"}};

  std::string profile(const std::string& scenario, const std::string& seconds) {
    const std::string db = dir_.file(scenario + ".db");
    auto env = env_;
    env["GPUSCOPE_SIM_TIME_SCALE"] = "6";
    auto r = run_gpuscope(
        {"profile", "--simulate", scenario, "-q", "-s", "100", "-o", db, "--", "sleep", seconds},
        env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return db;
  }

  json analyze_json(const std::vector<std::string>& args) {
    std::vector<std::string> all{"analyze", "--json", "-d", "none"};
    all.insert(all.end(), args.begin(), args.end());
    auto r = run_gpuscope(all);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? json::parse(r.out) : json();
  }
};

// `wall_ns` as nvidia-smi prints a local time `offset_s` east of UTC: "2026/11/25 22:40:11.719".
std::string smi_time(std::int64_t wall_ns, int offset_s) {
  const std::int64_t ms = wall_ns / 1'000'000 + std::int64_t{offset_s} * 1000;
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y/%m/%d %H:%M:%S", &tm);
  return fmt::format("{}.{:03d}", text, ms % 1000);
}

// The samples of run database `db` as `nvidia-smi --query-gpu=timestamp,index,power.draw,
// utilization.gpu,utilization.memory,memory.used,clocks.current.sm,temperature.gpu,
// clocks_event_reasons.active --format=csv` would print them: its units and its rounding (W to
// 2 decimals, whole %, MiB, MHz and °C, ms), local times in a zone +05:30.
void write_smi_csv(const std::string& db, const std::string& csv) {
  std::ofstream out(csv);
  out << "timestamp, index, power.draw [W], utilization.gpu [%], utilization.memory [%], "
         "memory.used [MiB], clocks.current.sm [MHz], temperature.gpu, "
         "clocks_event_reasons.active\n";
  const auto rows =
      query(db,
            "SELECT wall_ns, device_index, power_w, gpu_util_pct, mem_util_pct, "
            "memory_used_bytes, sm_clock_mhz, temperature_c, clock_event_reasons FROM samples "
            "ORDER BY mono_ns, device_index");
  for (const auto& r : rows) {
    const auto num = [&](std::size_t i) { return std::stod(r[i].value()); };
    out << fmt::format(
        "{}, {}, {:.2f} W, {:.0f} %, {:.0f} %, {:.0f} MiB, {:.0f} MHz, {:.0f}, "
        "0x{:016x}\n",
        smi_time(std::stoll(r[0].value()), 5 * 3600 + 1800), r[1].value(), num(2), num(3), num(4),
        num(5) / (1024.0 * 1024.0), num(6), num(7), static_cast<std::uint64_t>(num(8)));
  }
}

TEST_F(Logs, AProfiledRunWrittenAsAnNvidiaSmiLogGivesTheSameMeansAndEnergy) {
  const std::string db = profile("h100x4-straggler", "4");
  const std::string csv = dir_.file("straggler.csv");
  write_smi_csv(db, csv);
  const json profiled = analyze_json({db});
  const json logged = analyze_json({"--timezone", "+05:30", csv});
  ASSERT_EQ(profiled["gpus"].size(), 4U);
  ASSERT_EQ(logged["gpus"].size(), 4U);
  // Within nvidia-smi's rounding: W to 0.005, whole numbers to 0.5 (their means alike).
  const std::map<std::string, double> rounding = {
      {"power_w", 0.005},    {"gpu_util_pct", 0.5},  {"mem_util_pct", 0.5},
      {"sm_clock_mhz", 0.5}, {"temperature_c", 0.5}, {"memory_used_bytes", 0.5 * 1048576}};
  for (std::size_t g = 0; g < 4; ++g) {
    const json& p = profiled["gpus"][g];
    const json& l = logged["gpus"][g];
    EXPECT_EQ(l["samples"], p["samples"]) << "GPU " << g;
    for (const auto& [metric, tolerance] : rounding) {
      EXPECT_NEAR(l["over_time"][metric]["mean"].get<double>(),
                  p["over_time"][metric]["mean"].get<double>(), tolerance)
          << metric << " of GPU " << g;
    }
    // Energy: the log has no counter, so its power is integrated, as the profile's cross-check
    // is: the same up to the rounding of W and of times to ms.
    const double integrated = p["energy_j"]["integrated"].get<double>();
    EXPECT_TRUE(l["energy_j"]["counter"].is_null());
    EXPECT_NEAR(l["energy_j"]["integrated"].get<double>(), integrated, 0.002 * integrated)
        << "GPU " << g;
    EXPECT_NEAR(l["throttle_s"]["any_s"].get<double>(), p["throttle_s"]["any_s"].get<double>(),
                0.15)
        << "GPU " << g;
  }
  // The straggler found in both.
  EXPECT_EQ(logged["runs"][0]["origin"].get<std::string>().find("nvidia-smi --query-gpu log"), 0U);
  EXPECT_FALSE(logged["runs"][0]["problems"].empty());
}

TEST_F(Logs, EveryCommandTakesALog) {
  const std::string log = kLogs + "/smi-csv-appended.csv";
  const std::string db = dir_.file("log.db");
  auto imported = run_gpuscope({"import", log, "-o", db, "--timezone", "UTC"});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_NE(imported.err.find("imported 1 run (2 GPUs, 20 samples) from nvidia-smi-csv"),
            std::string::npos)
      << imported.err;
  EXPECT_EQ(number(db, "SELECT count(*) FROM samples WHERE power_w IS NULL"), 1);
  EXPECT_EQ(scalar(db, "SELECT min(start_time) FROM runs"), "2026-11-25T10:00:00.000000000Z");

  auto report = run_gpuscope({"report", log, "-o", dir_.file("r.html"), "--timezone", "UTC"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_GT(fs::file_size(dir_.file("r.html")), 10'000U) << "the report's data is compressed";

  auto merged = run_gpuscope({"merge", dir_.file("m.db"), log, kLogs + "/smi-csv-two-hosts.csv"});
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  EXPECT_EQ(number(dir_.file("m.db"), "SELECT count(*) FROM runs"), 3);

  auto trace = run_gpuscope({"export", "--perfetto", dir_.file("t.json"), log});
  ASSERT_EQ(trace.exit_code, 0) << trace.err;
  EXPECT_NE(read_file(dir_.file("t.json")).find("power_w"), std::string::npos);

  auto text = run_gpuscope({"analyze", log, "--timezone", "UTC"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("energy (integrated power)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("! imported from an nvidia-smi --query-gpu log"), std::string::npos)
      << text.out;
  EXPECT_NE(text.err.find("columns not understood, left out: foo.bar"), std::string::npos);

  // Two logs without a hostname field: their GPUs named by their files, not "GPU 0" twice.
  auto two = run_gpuscope(
      {"analyze", log, kLogs + "/smi-csv-4gpu-noindex.csv", "--timezone", "UTC", "--no-color"});
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_NE(two.out.find("smi-csv-appended.csv GPU 1"), std::string::npos) << two.out;
  EXPECT_NE(two.out.find("smi-csv-4gpu-noindex.csv GPU 3"), std::string::npos) << two.out;
}

// The analysis names the logs it read, not the temporary database they became (gone once the
// command ends): in its inputs and in each run's source.
TEST_F(Logs, TheAnalysisNamesTheLogsNotTheirTemporaryDatabase) {
  const std::string log = kLogs + "/smi-csv-appended.csv";
  const json one = analyze_json({log, "--timezone", "UTC"});
  ASSERT_TRUE(one.is_object());
  EXPECT_EQ(one["inputs"], json::array({log}));
  ASSERT_FALSE(one["runs"].empty());
  for (const auto& run : one["runs"]) EXPECT_EQ(run["source"], log);
  const std::string other = kLogs + "/smi-csv-4gpu-noindex.csv";
  const json two = analyze_json({log, other, "--timezone", "UTC"});
  ASSERT_TRUE(two.is_object());
  const std::string both = log + " and 1 more";  // one format: one database of both logs
  EXPECT_EQ(two["inputs"], json::array({both})) << two["inputs"];
  for (const auto& run : two["runs"]) EXPECT_EQ(run["source"], both);
}

TEST_F(Logs, WhatCannotBeReadIsAClearErrorAndNoOutput) {
  const std::string junk = dir_.file("notes.txt");
  std::ofstream(junk) << "dear diary\n";
  auto r = run_gpuscope({"import", junk, "-o", dir_.file("x.db")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("notes.txt is no input gpuscope reads"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_.file("x.db")));
  auto forced =
      run_gpuscope({"import", junk, "-o", dir_.file("x.db"), "--input-format", "nvidia-smi-csv"});
  EXPECT_EQ(forced.exit_code, 2);
  EXPECT_NE(forced.err.find("notes.txt:1: the first line is no nvidia-smi CSV header"),
            std::string::npos)
      << forced.err;
  auto unknown = run_gpuscope({"analyze", junk, "--input-format", "xml"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("--input-format xml: no such format"), std::string::npos);
  auto zone = run_gpuscope({"analyze", kLogs + "/smi-csv-appended.csv", "--timezone", "Nowhere"});
  EXPECT_EQ(zone.exit_code, 2);
  EXPECT_NE(zone.err.find("--timezone Nowhere: no such zone"), std::string::npos) << zone.err;
}

}  // namespace
}  // namespace gpuscope::testing
