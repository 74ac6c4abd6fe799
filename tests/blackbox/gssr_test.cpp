// gssr's data through the binary (docs/gssr.md): the fixtures made with gssr's own code, imported
// and read directly, compared with what gssr itself printed for them; and bad input.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "support/process.hpp"
#include "support/sql.hpp"

namespace gpuscope::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const std::string kFixtures = std::string(GPUSCOPE_TEST_FIXTURE_DIR) + "/gssr";
const std::string kFolder = kFixtures + "/profile_out_JobID_4242";
const std::string kExport = kFixtures + "/train-4242.sqlite";

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

// gssr's global summary: metric -> {median, mean, min, max} in gssr's printed units, and the
// factor from gpuscope's unit to that one.
struct Printed {
  double median, mean, min, max;
};
std::map<std::string, Printed> gssr_summary() {
  std::map<std::string, Printed> out;
  std::istringstream lines(read_text(kFixtures + "/gssr-analyze-output.txt"));
  const std::regex row(
      R"(^\| (\w+)\s+\| ([\d.]+)[^|]*\| ([\d.]+)[^|]*\| ([\d.]+)[^|]*\| ([\d.]+)[^|]*\|$)");
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, row)) {
      out[m[1]] = {std::stod(m[2]), std::stod(m[3]), std::stod(m[4]), std::stod(m[5])};
    }
  }
  return out;
}

class Gssr : public ::testing::Test {
 protected:
  TempDir dir_;

  json analyze_json(const std::vector<std::string>& inputs, std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"analyze", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), inputs.begin(), inputs.end());
    auto r = run_gpuscope(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? json::parse(r.out) : json();
  }
};

TEST_F(Gssr, ImportKeepsGssrsMetadataAndConvertsUnits) {
  const std::string db = dir_.file("train.db");
  auto r = run_gpuscope({"import", kFolder, "-o", db});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("imported 8 gssr processes (8 GPUs, 5760 samples)"), std::string::npos)
      << r.err;
  EXPECT_EQ(number(db,
                   "SELECT count(*) FROM runs WHERE launcher = 'gssr' AND slurm_job_id = "
                   "'4242' AND slurm_step_id = '0' AND label = 'train' AND command_line = "
                   "'python train.py --epochs 3'"),
            8);
  EXPECT_EQ(number(db, "SELECT count(DISTINCT rank) FROM runs"), 8);
  EXPECT_EQ(number(db, "SELECT count(*) FROM runs WHERE host = 'nid000001' AND rank >= 4"), 4);
  EXPECT_EQ(number(db, "SELECT sampling_interval_ms FROM runs LIMIT 1"), 500);
  EXPECT_EQ(number(db, "SELECT min(start_wall_ns) FROM runs"), 1795300000e9);
  EXPECT_EQ(number(db, "SELECT count(*) FROM devices WHERE saturation_source = 'dcgm'"), 8);
  EXPECT_EQ(number(db, "SELECT memory_total_bytes FROM devices LIMIT 1"), 81559.0 * 1048576);
  // Nothing gssr did not record is invented.
  EXPECT_EQ(number(db,
                   "SELECT count(*) FROM samples WHERE power_w IS NOT NULL OR energy_mj IS "
                   "NOT NULL OR temperature_c IS NOT NULL OR sm_clock_mhz IS NOT NULL"),
            0);
  EXPECT_EQ(number(db, "SELECT count(*) FROM power_samples"), 0);
  EXPECT_NE(scalar(db, "SELECT problems FROM runs LIMIT 1").value_or("").find("imported from gssr"),
            std::string::npos);
  // Units: ratios to percent, MiB to bytes, bytes/s kept; sample k at start + k x 500 ms.
  const auto first = query(db,
                           "SELECT sm_active_pct, memory_used_bytes, pcie_rx_bytes_per_s, "
                           "(wall_ns - (SELECT start_wall_ns FROM runs r WHERE r.run_id = "
                           "s.run_id)) / 1000000 FROM samples s WHERE run_id = 1 ORDER BY wall_ns "
                           "LIMIT 1 OFFSET 100");
  ASSERT_EQ(first.size(), 1U);
  EXPECT_EQ(std::stod(*first[0][3]), 50000);
}

TEST_F(Gssr, AnalyzeGivesTheFiguresGssrPrinted) {
  // gssr's summary is over every sample: gpuscope's without trimming.
  const json out = analyze_json({kFolder}, {"--detect-outliers", "none"});
  ASSERT_FALSE(out.is_null());
  // gssr's units: %, "GB" for frame buffer (MiB x 1e6 / 1e9, its display quirk), MB/s, GB/s.
  const std::map<std::string, std::pair<std::string, double>> ours = {
      {"gpu_utilization", {"gpu_util_pct", 1}},
      {"fb_used", {"memory_used_bytes", 1e6 / 1048576 / 1e9}},
      {"fb_free", {"memory_free_bytes", 1e6 / 1048576 / 1e9}},
      {"sm_active", {"sm_active_pct", 1}},
      {"sm_occupancy", {"sm_occupancy_pct", 1}},
      {"tensor_active", {"tensor_active_pct", 1}},
      {"dram_active", {"dram_active_pct", 1}},
      {"fp64_active", {"fp64_active_pct", 1}},
      {"fp32_active", {"fp32_active_pct", 1}},
      {"fp16_active", {"fp16_active_pct", 1}},
      {"pcie_tx_bytes", {"pcie_tx_bytes_per_s", 1e-6}},
      {"pcie_rx_bytes", {"pcie_rx_bytes_per_s", 1e-6}},
      {"nvlink_tx_bytes", {"nvlink_tx_bytes_per_s", 1e-9}},
      {"nvlink_rx_bytes", {"nvlink_rx_bytes_per_s", 1e-9}},
  };
  const auto printed = gssr_summary();
  ASSERT_EQ(printed.size(), 16U) << "the reference table parses";
  for (const auto& [gssr_name, mapping] : ours) {
    const auto& [metric, scale] = mapping;
    const Printed& p = printed.at(gssr_name);
    const json& o = out["over_both"][metric];
    ASSERT_FALSE(o.is_null()) << metric;
    EXPECT_NEAR(o["mean"].get<double>() * scale, p.mean, 0.005) << gssr_name << " mean";
    EXPECT_NEAR(o["median"].get<double>() * scale, p.median, 0.005) << gssr_name << " median";
    EXPECT_NEAR(o["min"].get<double>() * scale, p.min, 0.005) << gssr_name << " min";
    EXPECT_NEAR(o["max"].get<double>() * scale, p.max, 0.005) << gssr_name << " max";
  }
  // gssr's GPU averages: proc -> utilization, SM active, total_flop_activity.
  const std::map<int, std::array<double, 3>> per_gpu = {
      {0, {89.11, 71.79, 81.84}}, {1, {89.18, 72.03, 82.12}}, {2, {89.23, 72.01, 82.09}},
      {3, {89.23, 72.18, 82.29}}, {4, {89.26, 71.90, 81.97}}, {5, {89.19, 71.94, 82.02}},
      {6, {89.23, 72.05, 82.13}}, {7, {55.38, 41.11, 46.87}}};
  ASSERT_EQ(out["gpus"].size(), 8U);
  for (std::size_t g = 0; g < 8; ++g) {
    const json& gpu = out["gpus"][g];
    const int rank = out["runs"][gpu["run"].get<std::size_t>()]["rank"].get<int>();
    EXPECT_NEAR(gpu["over_time"]["gpu_util_pct"]["mean"].get<double>(), per_gpu.at(rank)[0], 0.005)
        << "rank " << rank;
    EXPECT_NEAR(gpu["over_time"]["sm_active_pct"]["mean"].get<double>(), per_gpu.at(rank)[1], 0.005)
        << "rank " << rank;
    EXPECT_NEAR(gpu["over_time"]["flop_active_pct"]["mean"].get<double>(), per_gpu.at(rank)[2],
                0.005)
        << "FLOP activity, rank " << rank;
  }
}

TEST_F(Gssr, DiagnosisNamesTheStragglerTrimsTheIdleStartAndInventsNoEnergy) {
  auto r = run_gpuscope({"analyze", kFolder});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("nid000001 rank 7 GPU 3 was 43 % less active than the median GPU"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("the first 36 s were idle"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("runs imported from gssr: gssr records no power"), std::string::npos);
  const json out = analyze_json({kFolder});
  EXPECT_TRUE(out["energy_j"].is_null() || out["energy_j"]["counter"].is_null()) << out["energy_j"];
  EXPECT_TRUE(out["carbon"].is_null()) << out["carbon"];
}

TEST_F(Gssr, GssrsMetricNamesAreAccepted) {
  auto r = run_gpuscope({"analyze", kFolder, "--aggregate", "time", "--metric", "flop_active",
                         "--metric", "sm_active", "--metric", "fb_used", "--csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* column : {",flop_active_pct,%,", ",sm_active_pct,%,", ",memory_used_bytes,"}) {
    EXPECT_NE(r.out.find(column), std::string::npos) << column << "\n" << r.out;
  }
  // pcie_tx_bytes is gpuscope's counter, not gssr's rate: it stays gpuscope's.
  auto counter = run_gpuscope(
      {"analyze", kFolder, "--aggregate", "time", "--metric", "pcie_tx_bytes", "--csv"});
  EXPECT_EQ(counter.out.find("pcie_tx_bytes_per_s"), std::string::npos) << counter.out;
}

TEST_F(Gssr, TheFolderAndTheExportGiveTheSameAnalysis) {
  const json folder = analyze_json({kFolder});
  const json exported = analyze_json({kExport});
  ASSERT_FALSE(folder.is_null());
  ASSERT_FALSE(exported.is_null());
  EXPECT_EQ(folder["over_both"], exported["over_both"]);
  EXPECT_EQ(folder["gpus"].size(), exported["gpus"].size());
  EXPECT_EQ(folder["findings"], exported["findings"]);
}

TEST_F(Gssr, ReportMergeAndExportTakeGssrDataDirectly) {
  // A private TMPDIR, to see that the temporary databases go.
  const std::string tmp = dir_.file("tmp");
  fs::create_directories(tmp);
  const std::map<std::string, std::string> env = {{"TMPDIR", tmp}};
  const std::string html = dir_.file("report.html");
  auto report = run_gpuscope({"report", kFolder, "-o", html}, env);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_GT(fs::file_size(html), 10000U);
  const std::string merged = dir_.file("merged.db");
  auto merge = run_gpuscope({"merge", merged, kExport}, env);
  ASSERT_EQ(merge.exit_code, 0) << merge.err;
  EXPECT_EQ(number(merged, "SELECT count(*) FROM runs WHERE launcher = 'gssr'"), 8);
  auto trace = run_gpuscope({"export", "--perfetto", dir_.file("t.json"), kFolder}, env);
  ASSERT_EQ(trace.exit_code, 0) << trace.err;
  EXPECT_TRUE(fs::is_empty(tmp)) << "no temporary database is left behind";
}

// A copy of the fixture folder to damage.
std::string copy_folder(const TempDir& dir) {
  const std::string copy = dir.file("profile_out_JobID_4242");
  fs::copy(kFolder, copy, fs::copy_options::recursive);
  for (const auto& entry : fs::recursive_directory_iterator(copy)) {
    fs::permissions(entry.path(), fs::perms::owner_write, fs::perm_options::add);
  }
  return copy;
}

std::string process_file(const std::string& folder, int proc) {
  return folder + "/train_job_4242_step_0/train_job_4242_step_0_proc_" + std::to_string(proc) +
         ".json";
}

TEST_F(Gssr, AFileCutShortIsNamed) {
  const std::string folder = copy_folder(dir_);
  const std::string file = process_file(folder, 3);
  const std::string text = read_text(file);
  std::ofstream(file, std::ios::trunc) << text.substr(0, text.size() / 2);
  auto r = run_gpuscope({"analyze", folder});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("train_job_4242_step_0_proc_3.json is not a gssr process file"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("not complete JSON"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_.file("out.db")));
}

// The temporary run database of a direct analysis lives in $TMPDIR only while the command runs:
// nothing is left there after it succeeds, nor after an input fails half-way through.
TEST_F(Gssr, NothingIsLeftInTmpdirWhateverTheEnd) {
  TempDir tmp;
  auto ok = run_gpuscope({"analyze", "--json", kFolder}, {{"TMPDIR", tmp.path()}});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(fs::is_empty(tmp.path())) << "after a complete analysis";
  const std::string folder = copy_folder(dir_);
  const std::string file = process_file(folder, 6);
  std::ofstream(file, std::ios::trunc) << "{\"metadata\": {";
  auto failed =
      run_gpuscope({"report", folder, "-o", dir_.file("r.html")}, {{"TMPDIR", tmp.path()}});
  EXPECT_EQ(failed.exit_code, 1) << failed.err;
  EXPECT_TRUE(fs::is_empty(tmp.path())) << "after a failed import";
  EXPECT_FALSE(fs::exists(dir_.file("r.html")));
}

TEST_F(Gssr, DeepNestingIsRefusedBeforeParsing) {
  const std::string file = dir_.file("deep_job_1_step_0_proc_0.json");
  std::ofstream(file) << R"({"metadata": )" << std::string(1'000'000, '[')
                      << std::string(1'000'000, ']') << "}";
  auto r = run_gpuscope({"import", file, "-o", dir_.file("deep.db")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("nests deeper than gssr's does (past 8 levels"), std::string::npos) << r.err;
}

TEST_F(Gssr, TheSameDataTwiceIsReadOnceOrRefusedNamingTheInputs) {
  const std::string db = dir_.file("twice.db");
  auto twice = run_gpuscope({"import", kFolder, kFolder + "/", "-o", db});
  ASSERT_EQ(twice.exit_code, 0) << twice.err;
  EXPECT_NE(twice.err.find("was named more than once; it is read once"), std::string::npos)
      << twice.err;
  EXPECT_EQ(number(db, "SELECT count(*) FROM runs"), 8);
  // A folder and its own export: the same processes in two forms.
  auto both = run_gpuscope({"analyze", kExport, kFolder});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("hold the same gssr process (job 4242, step 0, process 0)"),
            std::string::npos)
      << both.err;
  EXPECT_NE(both.err.find("train-4242.sqlite"), std::string::npos) << both.err;
  // An output that is one of the inputs, or a device, is refused before anything is read.
  auto device = run_gpuscope({"import", kExport, "-o", "/dev/null", "-f"});
  EXPECT_EQ(device.exit_code, 2);
}

TEST_F(Gssr, ForeignFilesAreLeftOutAndSaid) {
  const std::string folder = copy_folder(dir_);
  std::ofstream(folder + "/train_job_4242_step_0/notes.txt") << "lab book\n";
  std::ofstream(folder + "/slurm-4242.out") << "srun output\n";
  const std::string db = dir_.file("out.db");
  auto r = run_gpuscope({"import", folder, "-o", db});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("2 files that are not gssr process files left out"), std::string::npos)
      << r.err;
  EXPECT_EQ(number(db, "SELECT count(*) FROM runs"), 8);
}

TEST_F(Gssr, NanValuesAreMissingNotZero) {
  const std::string folder = copy_folder(dir_);
  const std::string file = process_file(folder, 0);
  std::string text = read_text(file);
  // Python's json.dump writes NaN as a bare word: the first sm_active values become NaN.
  const std::string key = "\"sm_active\": [";
  const auto at = text.find(key) + key.size();
  text.replace(at, text.find(',', at) - at, "NaN");
  std::ofstream(file, std::ios::trunc) << text;
  const std::string db = dir_.file("nan.db");
  auto r = run_gpuscope({"import", folder, "-o", db});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(number(db, "SELECT count(*) FROM samples WHERE run_id = 1 AND sm_active_pct IS NULL"),
            1);
  EXPECT_EQ(number(db, "SELECT count(*) FROM samples WHERE run_id = 1"), 720);
}

TEST_F(Gssr, SeveralGpusPerProcessAreAllKept) {
  // One process holding two GPUs: gssr's own exporter keeps only the last (docs/gssr.md).
  json doc = json::parse(read_text(process_file(kFolder, 0)));
  doc["data"]["1"] = doc["data"]["0"];
  doc["metadata"]["n_gpus"] = 2;
  doc["metadata"]["gpu_ids"] = {0, 1};
  const std::string file = dir_.file("big_job_1_step_0_proc_0.json");
  std::ofstream(file) << doc.dump();
  const std::string db = dir_.file("two.db");
  auto r = run_gpuscope({"import", file, "-o", db});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(number(db, "SELECT count(*) FROM devices"), 2);
  EXPECT_EQ(number(db, "SELECT count(DISTINCT device_index) FROM samples"), 2);
}

TEST_F(Gssr, ABrokenExportSaysWhatIsMissing) {
  const std::string copy = dir_.file("export.sqlite");
  fs::copy_file(kExport, copy);
  fs::permissions(copy, fs::perms::owner_write, fs::perm_options::add);
  run_sql(copy, "ALTER TABLE data DROP COLUMN tensor_active");
  auto r = run_gpuscope({"analyze", copy});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("job_metadata.metrics lists tensor_active, but table data has no such "
                       "column"),
            std::string::npos)
      << r.err;
  run_sql(copy, "DROP TABLE process_metadata");
  auto missing = run_gpuscope({"import", copy, "-o", dir_.file("x.db")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("it has no table \"process_metadata\""), std::string::npos)
      << missing.err;
  EXPECT_FALSE(fs::exists(dir_.file("x.db")));
  auto other = run_gpuscope({"import", dir_.path(), "-o", dir_.file("y.db")});
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("is not gssr or nvidia-smi-csv or nvidia-smi-dmon or dcgmi-dmon data"),
            std::string::npos)
      << other.err;
}

}  // namespace
}  // namespace gpuscope::testing
