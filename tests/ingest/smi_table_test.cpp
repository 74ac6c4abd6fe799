// Logs of nvidia-smi's human table (`nvidia-smi -l 5 > gpu.log`, `watch nvidia-smi`) through the
// ingest layer: the fixtures written to nvidia-smi's real column widths (driver 580 and 470, 418
// without the MIG row; tests/fixtures/logs/README.md), read back from the run database the import
// wrote, and the refusals of what cannot be read for sure.
#include <gtest/gtest.h>

#include "ingest/import.hpp"
#include "log_import.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::ingest::test {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr std::int64_t k224011 = 1795646411 * kSecond;  // 2026-11-25 22:40:11 UTC

ReadOptions utc() {
  ReadOptions o;
  o.timezone = "UTC";
  return o;
}

struct Processes {
  std::vector<GpuProcess> processes;
  std::vector<ProcessSample> samples;
};

Processes processes_of(const fs::path& log) {
  gpuscope::testing::TempDir tmp;
  const fs::path out = fs::path(tmp.path()) / "out.db";
  import_inputs({log}, out, false, utc());
  const auto reader = store::RunReader::open(out);
  const auto runs = reader.runs();
  EXPECT_EQ(runs.size(), 1U);
  return {reader.processes(runs.at(0).run_id), reader.process_samples(runs.at(0).run_id)};
}

TEST(SmiTable, EightH100sGiveEveryFieldOfEveryWholeSnapshot) {
  const auto r = import_logs({kLogs / "smi-table-8xh100.log"}, utc());
  ASSERT_EQ(r.runs.size(), 1U);
  ASSERT_EQ(r.samples.size(), 8U);
  for (unsigned gpu = 0; gpu < 8; ++gpu) EXPECT_EQ(r.count(gpu), 6U) << "GPU " << gpu;
  const SampleRow& busy = r.at(3, 2);  // the third snapshot, 10 s in
  EXPECT_EQ(busy.wall_ns, k224011 + 10 * kSecond);
  EXPECT_EQ(busy.get(Metric::PowerW), 632);
  EXPECT_EQ(busy.get(Metric::PowerLimitW), 700);
  EXPECT_EQ(busy.get(Metric::TemperatureC), 60);
  EXPECT_EQ(busy.get(Metric::MemoryUsedBytes), 71234 * kMiB);
  EXPECT_EQ(busy.get(Metric::GpuUtilPct), 93);
  EXPECT_EQ(r.at(0, 0).get(Metric::PowerW), 70) << "idle before the job";
  EXPECT_FALSE(r.at(5, 3).get(Metric::PowerW)) << "ERR! is no value";
  EXPECT_EQ(r.at(5, 3).get(Metric::TemperatureC), 63) << "the row's other values stay";
  const DeviceDescription& d = r.devices.at(3);
  EXPECT_EQ(d.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d.pci_bus_id, "00000000:4B:00.0");
  EXPECT_EQ(d.memory_total_bytes, static_cast<std::uint64_t>(81559 * kMiB));
  EXPECT_EQ(d.enforced_power_limit_w, 700);
  EXPECT_EQ(d.mig_enabled, false);
  EXPECT_EQ(r.runs[0].info.driver_version, "580.95.05");
  EXPECT_EQ(r.runs[0].info.sampling_interval_ns, 5 * kSecond);
  EXPECT_EQ(r.health_of(2).size(), 6U);
  EXPECT_EQ(r.health_of(2).at(0).get(HealthMetric::EccUncorrectedVolatile), 0);
  EXPECT_TRUE(r.note_has({"last snapshot (from line 330) is cut off", "left out"}));
  EXPECT_TRUE(r.note_has({"Pwr:Usage has no value", "ERR!", "1 row"}));
  EXPECT_TRUE(r.note_has({"no column", "Compute M.", "Fan", "Perf", "Persistence-M"}));
  EXPECT_TRUE(r.note_has({"local times read in UTC"}));
  EXPECT_TRUE(r.problem_has("whole watts"));
}

TEST(SmiTable, TheProcessTableGivesEachProcessOnceAndWhatItHeldEachSnapshot) {
  const auto p = processes_of(kLogs / "smi-table-8xh100.log");
  ASSERT_EQ(p.processes.size(), 8U) << "one rank per GPU";
  EXPECT_EQ(p.processes[0].pid, 48211U);
  EXPECT_EQ(p.processes[0].command, "python3");
  EXPECT_EQ(p.processes[0].command_line, "/opt/conda/bin/python3");
  EXPECT_EQ(p.processes[0].first_wall_ns, k224011 + 5 * kSecond) << "the first busy snapshot";
  ASSERT_EQ(p.samples.size(), 5U * 8U) << "5 busy snapshots, none of the cut one";
  for (const auto& s : p.samples) {
    EXPECT_EQ(s.pid, 48211U + s.device_index);
    EXPECT_EQ(s.used_memory_bytes, static_cast<std::uint64_t>(70890 * kMiB));
  }
}

TEST(SmiTable, The470LayoutWithCutNamesAndALogBeginningInsideASnapshot) {
  const auto r = import_logs({kLogs / "smi-table-4xa100-470.log"}, utc());
  ASSERT_EQ(r.samples.size(), 4U);
  EXPECT_EQ(r.count(0), 4U) << "the rotated tail before the first date line is not read";
  EXPECT_EQ(r.at(0, 0).wall_ns, k224011);
  EXPECT_EQ(r.at(2, 1).get(Metric::PowerW), 250 + 40 + 2);
  EXPECT_EQ(r.at(2, 1).get(Metric::PowerLimitW), 400);
  EXPECT_EQ(r.at(1, 3).get(Metric::TemperatureC), 46);
  EXPECT_EQ(r.devices.at(0).name, "NVIDIA A100-SXM...") << "kept as shown";
  EXPECT_EQ(r.devices.at(0).memory_total_bytes, static_cast<std::uint64_t>(40536 * kMiB));
  EXPECT_EQ(r.health_of(2).at(0).get(HealthMetric::EccUncorrectedVolatile), 2);
  EXPECT_EQ(r.runs[0].info.driver_version, "470.161.03");
  EXPECT_TRUE(r.note_has({"begins inside a snapshot", "left out"}));
  EXPECT_TRUE(r.note_has({"'NVIDIA A100-SXM...'", "cut by nvidia-smi", "--query-gpu=name"}));
  const auto p = processes_of(kLogs / "smi-table-4xa100-470.log");
  EXPECT_EQ(p.processes.size(), 4U);
  EXPECT_EQ(p.samples.size(), 3U * 4U) << "'No running processes found' in the first snapshot";
  EXPECT_EQ(p.processes[0].command_line, "...onda3/envs/train/bin/python");
  EXPECT_TRUE(r.note_has({"4 process names cut by nvidia-smi"}));
}

TEST(SmiTable, AWatchCaptureWithEscapesGivesItsHostFansLeftOut) {
  const auto r = import_logs({kLogs / "smi-table-geforce-watch.log"}, utc());
  ASSERT_EQ(r.samples.size(), 2U);
  EXPECT_EQ(r.count(1), 5U);
  EXPECT_EQ(r.runs[0].info.host, "ws-07");
  EXPECT_EQ(r.at(1, 4).wall_ns, k224011 + 20 * kSecond);
  EXPECT_EQ(r.at(1, 4).get(Metric::PowerW), 301);
  EXPECT_FALSE(r.at(1, 2).get(Metric::PowerW)) << "N/A";
  EXPECT_EQ(r.at(0, 0).get(Metric::MemoryUsedBytes), 6493 * kMiB);
  EXPECT_EQ(r.devices.at(0).name, "NVIDIA GeForce RTX 3090");
  EXPECT_FALSE(r.devices.at(0).mig_enabled) << "MIG M. N/A: the GPU cannot do MIG";
  EXPECT_TRUE(r.health_of(0).empty()) << "ECC N/A on a GeForce";
  EXPECT_TRUE(r.note_has({"Volatile Uncorr. ECC has no value", "N/A", "10 rows"}));
  const auto p = processes_of(kLogs / "smi-table-geforce-watch.log");
  EXPECT_EQ(p.processes.size(), 3U) << "python on both GPUs is one process";
  EXPECT_EQ(p.samples.size(), 5U * 4U);
}

TEST(SmiTable, Driver418WithoutMigRowOrInstanceColumns) {
  const auto r = import_logs({kLogs / "smi-table-v100-418.log"}, utc());
  ASSERT_EQ(r.samples.size(), 2U);
  EXPECT_EQ(r.count(1), 3U);
  EXPECT_EQ(r.at(1, 2).get(Metric::PowerW), 153);
  EXPECT_EQ(r.at(1, 2).wall_ns, k224011 + 4 * kSecond);
  EXPECT_FALSE(r.devices.at(0).mig_enabled);
  const auto p = processes_of(kLogs / "smi-table-v100-418.log");
  EXPECT_EQ(p.samples.size(), 6U);
  EXPECT_EQ(p.samples.back().used_memory_bytes, static_cast<std::uint64_t>(14990 * kMiB));
}

TEST(SmiTable, TheDateLineIsReadInTheZoneGiven) {
  ReadOptions o;
  o.timezone = "+01:00";
  const auto r = import_logs({kLogs / "smi-table-v100-418.log"}, o);
  EXPECT_EQ(r.at(0, 0).wall_ns, k224011 - 3600 * kSecond);
}

// The fixture with line `number` (1-based) replaced by `text`.
std::string with_line(const fs::path& fixture, std::size_t number, const std::string& text) {
  const std::string all = read_text(fixture);
  std::string out;
  std::size_t at = 0;
  for (std::size_t n = 1; at < all.size(); ++n) {
    const std::size_t end = all.find('\n', at);
    out += n == number ? text : all.substr(at, end - at);
    out += '\n';
    at = end + 1;
  }
  return out;
}

TEST(SmiTable, ADamagedRowIsRefusedWithItsLineAndNothingWritten) {
  gpuscope::testing::TempDir tmp;
  const fs::path log = write_text(
      fs::path(tmp.path()) / "gpu.log",
      with_line(kLogs / "smi-table-v100-418.log", 9,
                "| N/A   36C    P0   lots / 300W |  15000MiB / 16130MiB |     99%   E. Process |"));
  int code = 0;
  const std::string error = import_error({log}, utc(), &code);
  EXPECT_EQ(code, 2);
  EXPECT_NE(error.find("gpu.log:8: "), std::string::npos) << "the block's first line: " << error;
  EXPECT_NE(error.find("is no fan, temperature, performance state and power / cap"),
            std::string::npos)
      << error;
  const fs::path lost = write_text(fs::path(tmp.path()) / "lost.log",
                                   with_line(kLogs / "smi-table-v100-418.log", 20,
                                             "|    7      1201      C   python        1MiB |"));
  EXPECT_NE(import_error({lost}, utc()).find("lost.log:20: a process on GPU 7"), std::string::npos);
}

TEST(SmiTable, ASnapshotCutOffByTheNextIsLeftOutWhole) {
  gpuscope::testing::TempDir tmp;
  std::string text = read_text(kLogs / "smi-table-v100-418.log");
  const std::size_t second = text.find("Wed Nov 25 22:40:13 2026");
  const std::size_t cut = text.find("|   1  Tesla", second);
  text.erase(cut, text.find("Wed Nov 25 22:40:15", cut) - cut);  // GPU 1 and processes gone
  const auto r = import_logs({write_text(fs::path(tmp.path()) / "cut.log", text)}, utc());
  EXPECT_EQ(r.count(0), 2U) << "GPU 0 of the cut snapshot is not half-read";
  EXPECT_EQ(r.count(1), 2U);
  EXPECT_TRUE(r.note_has({"1 snapshot cut off by the next one (from line 22)", "left out"}));
}

TEST(SmiTable, MigModeAndItsDevicesTable) {
  gpuscope::testing::TempDir tmp;
  const std::string text = R"(Wed Nov 25 22:40:11 2026       
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 580.95.05              Driver Version: 580.95.05      CUDA Version: 13.0     |
+-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA A100-SXM4-80GB          On  |   00000000:07:00.0 Off |                    0 |
| N/A   38C    P0            121W /  400W |   40243MiB /  81920MiB |     N/A      Default |
|                                         |                        |              Enabled |
+-----------------------------------------+------------------------+----------------------+

+-----------------------------------------------------------------------------------------+
| MIG devices:                                                                            |
+------------------+----------------------------------+-----------+-----------------------+
| GPU  GI  CI  MIG |                     Memory-Usage |        Vol|        Shared         |
|      ID  ID  Dev |                       BAR1-Usage | SM     Unc| CE ENC  DEC  OFA  JPG |
|                  |                                  |        ECC|                       |
|==================+==================================+===========+=======================|
|  0    1   0   0  |           40230MiB / 40192MiB    | 42      0 |  3   0    2    0    0 |
|                  |                 2MiB / 32767MiB  |           |                       |
+------------------+----------------------------------+-----------+-----------------------+

+-----------------------------------------------------------------------------------------+
| Processes:                                                                              |
|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |
|        ID   ID                                                               Usage      |
|=========================================================================================|
|    0    1    0            4242      C   python                                40210MiB |
+-----------------------------------------------------------------------------------------+
)";
  const fs::path log = write_text(fs::path(tmp.path()) / "mig.log", text);
  const auto r = import_logs({log}, utc());
  ASSERT_EQ(r.count(0), 1U);
  EXPECT_EQ(r.devices.at(0).mig_enabled, true);
  EXPECT_FALSE(r.at(0, 0).get(Metric::GpuUtilPct)) << "N/A under MIG";
  EXPECT_EQ(r.at(0, 0).get(Metric::PowerW), 121);
  EXPECT_TRUE(r.note_has({"MIG devices"}));
  EXPECT_TRUE(r.note_has({"process GI, CI"}));
  const auto p = processes_of(log);
  ASSERT_EQ(p.samples.size(), 1U);
  EXPECT_EQ(p.samples[0].device_index, 0U);
}

TEST(SmiTable, RecognisedFromItsContentAndNotConfusedWithOtherText) {
  gpuscope::testing::TempDir tmp;
  EXPECT_EQ(import_error({kLogs / "smi-table-geforce-watch.log"}), "");
  const fs::path other =
      write_text(fs::path(tmp.path()) / "notes.txt", "Wed Nov 25 22:40:11 2026\nthe job started\n");
  const std::string error = import_error({other});
  EXPECT_NE(error.find("is no input gpuscope reads"), std::string::npos) << error;
  EXPECT_NE(error.find("nvidia-smi-table"), std::string::npos) << error;
  EXPECT_NE(error.find("--input-format"), std::string::npos) << error;
  ReadOptions forced = utc();
  forced.format = "nvidia-smi-table";
  EXPECT_NE(import_error({other}, forced).find("notes.txt:2: 'the job started' is no line"),
            std::string::npos)
      << import_error({other}, forced);
}

// analyze, report, merge and export pass what no format recognises on as a run database: a text
// file among them said "not a SQLite database" and nothing of the formats gpuscope reads.
TEST(SmiTable, ATextFileGivenToAnalyzeListsTheFormatsRead) {
  gpuscope::testing::TempDir tmp;
  const fs::path other = write_text(fs::path(tmp.path()) / "gpu.log", "GPU 0: busy\n");
  try {
    RunInputs inputs({other.string()}, {});
    FAIL() << "a text file is no run database";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(what.find("gpu.log is no input gpuscope reads"), std::string::npos) << what;
    EXPECT_NE(what.find("nvidia-smi-table"), std::string::npos) << what;
    EXPECT_NE(what.find("--input-format NAME"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace gpuscope::ingest::test
