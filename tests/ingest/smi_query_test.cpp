// Logs of nvidia-smi's detailed query (`nvidia-smi -q -l 5 > gpu.log`) through the ingest layer:
// the fixtures of tests/fixtures/logs/make_smi_query_fixtures.py (2 x H100 at driver 580, 1 x A100
// at driver 470 with its older section names), read back from the run database the import wrote,
// and the refusals of what cannot be read for sure.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/clock_events.hpp"
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

// `text` with its first `from` replaced by `to` (which must be there).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// The 1-based number of the line of `text` where `what` first is.
std::size_t line_of(const std::string& text, const std::string& what) {
  const std::size_t at = text.find(what);
  return 1 + static_cast<std::size_t>(
                 std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

TEST(SmiQuery, TwoH100sAtDriver580GiveEveryMappedKeyOfEveryWholeBlock) {
  const auto r = import_logs({kLogs / "smi-query-2xh100-580.log"}, utc());
  ASSERT_EQ(r.runs.size(), 1U);
  ASSERT_EQ(r.samples.size(), 2U);
  EXPECT_EQ(r.count(0), 4U) << "the fifth block is cut off at the end of the file";
  EXPECT_EQ(r.count(1), 4U);
  const SampleRow& busy = r.at(1, 3);  // the fourth block, 15 s in
  EXPECT_EQ(busy.wall_ns, k224011 + 15 * kSecond);
  EXPECT_EQ(busy.get(Metric::PowerW), 701.25);
  EXPECT_EQ(busy.get(Metric::PowerLimitW), 700);
  EXPECT_EQ(busy.get(Metric::TemperatureC), 57);
  EXPECT_EQ(busy.get(Metric::MemoryTemperatureC), 58);
  EXPECT_EQ(busy.get(Metric::MemoryUsedBytes), 70890 * kMiB);
  EXPECT_EQ(busy.get(Metric::MemoryReservedBytes), 551 * kMiB);
  EXPECT_EQ(busy.get(Metric::MemoryFreeBytes), (81559 - 551 - 70890) * kMiB);
  EXPECT_EQ(busy.get(Metric::GpuUtilPct), 91);
  EXPECT_EQ(busy.get(Metric::MemUtilPct), 41);
  EXPECT_EQ(busy.get(Metric::SmClockMhz), 1980);
  EXPECT_EQ(busy.get(Metric::GraphicsClockMhz), 1980);
  EXPECT_EQ(busy.get(Metric::MemClockMhz), 2619);
  EXPECT_EQ(busy.get(Metric::ClockEventReasons), static_cast<double>(kClockEventSwPowerCap));
  EXPECT_EQ(r.at(0, 0).get(Metric::ClockEventReasons), static_cast<double>(kClockEventGpuIdle));
  EXPECT_EQ(r.at(0, 0).get(Metric::PowerW), 70.25) << "idle before the job";
  EXPECT_FALSE(r.at(1, 2).get(Metric::PowerW)) << "[Unknown Error] is no value";
  EXPECT_EQ(r.at(1, 2).get(Metric::TemperatureC), 57) << "the row's other values stay";
  EXPECT_FALSE(busy.get(Metric::ModulePowerW)) << "Module Power Readings N/A";
  const auto& health = r.health_of(1).at(3);
  EXPECT_EQ(health.get(HealthMetric::EccEnabled), 1);
  EXPECT_EQ(health.get(HealthMetric::EccCorrectedVolatile), 3) << "SRAM 1 + DRAM 2";
  EXPECT_EQ(health.get(HealthMetric::EccUncorrectedVolatile), 0);
  EXPECT_EQ(health.get(HealthMetric::EccCorrectedAggregate), 16) << "SRAM 11 + DRAM 5";
  EXPECT_EQ(health.get(HealthMetric::EccUncorrectedAggregate), 1) << "parity 0 + SEC-DED 1";
  EXPECT_EQ(health.get(HealthMetric::RemappedRowsUncorrectable), 0);
  EXPECT_EQ(health.get(HealthMetric::RowRemapPending), 0);
  EXPECT_EQ(health.get(HealthMetric::PcieReplays), 0);
  EXPECT_FALSE(health.get(HealthMetric::RetiredPagesSbe)) << "N/A on Hopper";
  const DeviceDescription& d = r.devices.at(1);
  EXPECT_EQ(d.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d.uuid, "GPU-9a1b2c3d-0000-4000-8000-000000000001");
  EXPECT_EQ(d.architecture, "Hopper");
  EXPECT_EQ(d.pci_bus_id, "00000000:47:00.0");
  EXPECT_EQ(d.memory_total_bytes, static_cast<std::uint64_t>(81559 * kMiB));
  EXPECT_EQ(d.enforced_power_limit_w, 700);
  EXPECT_EQ(d.min_power_limit_w, 200);
  EXPECT_EQ(d.max_sm_clock_mhz, 1980U);
  EXPECT_EQ(d.max_memory_clock_mhz, 2619U);
  EXPECT_EQ(d.mig_enabled, false);
  EXPECT_EQ(r.runs[0].info.driver_version, "580.65.06");
  EXPECT_EQ(r.runs[0].info.sampling_interval_ns, 5 * kSecond);
  EXPECT_TRUE(r.note_has({"the last block (from line", "cut off at the end of the file"}));
  EXPECT_TRUE(r.note_has({"GPU Power Readings/Power Draw has no value", "[Unknown Error]"}));
  EXPECT_TRUE(r.note_has({"no column", "BAR1 Memory Usage", "Fan Speed", "Performance State",
                          "Temperature/GPU T.Limit Temp", "Utilization/JPEG"}));
  EXPECT_TRUE(r.note_has({"no column", "ECC Errors/Aggregate/SRAM Threshold Exceeded",
                          "Remapped Rows/Bank Remap Availability Histogram"}));
  EXPECT_FALSE(r.note_has({"no column", "DRAM Uncorrectable"})) << "the ECC counts are read";
  EXPECT_FALSE(r.note_has({"no column", "SEC-DED"}));
  EXPECT_FALSE(r.note_has({"no column", "Power Draw"}));
  EXPECT_TRUE(r.note_has({"local times read in UTC"}));
  EXPECT_TRUE(r.problem_has("nvidia-smi -q"));
}

TEST(SmiQuery, TheProcessesSectionGivesEachProcessOnceAndWhatItHeldEachBlock) {
  const auto p = processes_of(kLogs / "smi-query-2xh100-580.log");
  ASSERT_EQ(p.processes.size(), 2U);
  EXPECT_EQ(p.processes[0].pid, 48211U);
  EXPECT_EQ(p.processes[0].command, "python3");
  EXPECT_EQ(p.processes[0].command_line, "/opt/conda/bin/python3");
  EXPECT_EQ(p.processes[0].first_wall_ns, k224011 + 5 * kSecond) << "the first busy block";
  ASSERT_EQ(p.samples.size(), 3U * 2U) << "3 busy whole blocks";
  for (const auto& s : p.samples) {
    EXPECT_EQ(s.pid, 48211U + s.device_index);
    EXPECT_EQ(s.used_memory_bytes, static_cast<std::uint64_t>(70400 * kMiB));
  }
}

TEST(SmiQuery, Driver470NamesARotatedStartAndABlockCutByTheNext) {
  const auto r = import_logs({kLogs / "smi-query-a100-470.log"}, utc());
  ASSERT_EQ(r.count(0), 3U) << "blocks 0, 2 and 3; block 1 cut off by block 2";
  EXPECT_EQ(r.at(0, 0).wall_ns, k224011);
  EXPECT_EQ(r.at(0, 1).wall_ns, k224011 + 4 * kSecond);
  const SampleRow& hot = r.at(0, 1);
  EXPECT_EQ(hot.get(Metric::PowerW), 356.44) << "Power Readings/Power Draw";
  EXPECT_EQ(hot.get(Metric::PowerLimitW), 350) << "Enforced Power Limit";
  EXPECT_EQ(hot.get(Metric::GpuUtilPct), 97) << "Utilization/Gpu";
  EXPECT_EQ(hot.get(Metric::ClockEventReasons),
            static_cast<double>(kClockEventHwSlowdown | kClockEventHwThermalSlowdown))
      << "Clocks Throttle Reasons";
  EXPECT_EQ(r.at(0, 0).get(Metric::ClockEventReasons), 0);
  EXPECT_FALSE(hot.get(Metric::MemoryTemperatureC));
  const auto& health = r.health_of(0).at(1);
  EXPECT_EQ(health.get(HealthMetric::EccEnabled), 1) << "Ecc Mode/Current";
  EXPECT_EQ(health.get(HealthMetric::EccCorrectedVolatile), 3);
  EXPECT_EQ(health.get(HealthMetric::EccUncorrectedVolatile), 1);
  EXPECT_EQ(health.get(HealthMetric::EccUncorrectedAggregate), 1);
  EXPECT_EQ(health.get(HealthMetric::RowRemapPending), 1);
  EXPECT_EQ(health.get(HealthMetric::PcieReplays), 2);
  const DeviceDescription& d = r.devices.at(0);
  EXPECT_EQ(d.name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(d.power_limit_w, 400) << "Power Limit";
  EXPECT_EQ(d.enforced_power_limit_w, 350);
  EXPECT_EQ(d.memory_total_bytes, static_cast<std::uint64_t>(40536 * kMiB));
  EXPECT_EQ(r.runs[0].info.driver_version, "470.161.03");
  EXPECT_TRUE(r.note_has({"1 block cut off by the next one", "left out"}));
  EXPECT_TRUE(r.note_has({"begins inside a block", "first 3 lines"}));
  EXPECT_TRUE(r.note_has({"Temperature/Memory Current Temp has no value", "N/A", "3 rows"}));
  const auto p = processes_of(kLogs / "smi-query-a100-470.log");
  ASSERT_EQ(p.processes.size(), 1U);
  EXPECT_EQ(p.processes[0].command, "python");
  ASSERT_EQ(p.samples.size(), 2U) << "Processes : None in the first block";
  EXPECT_EQ(p.samples[0].used_memory_bytes, static_cast<std::uint64_t>(30225 * kMiB));
}

TEST(SmiQuery, TheTimestampIsReadInTheZoneGiven) {
  ReadOptions o;
  o.timezone = "+01:00";
  const auto r = import_logs({kLogs / "smi-query-a100-470.log"}, o);
  EXPECT_EQ(r.at(0, 0).wall_ns, k224011 - 3600 * kSecond);
}

// Drivers 570 and later print the power as "Average Power Draw" and "Instantaneous Power Draw":
// power_w is the average (NVML's power usage), the instant its own column.
TEST(SmiQuery, AverageAndInstantaneousPowerDrawOfNewerDrivers) {
  gpuscope::testing::TempDir tmp;
  const std::string text = replaced(read_text(kLogs / "smi-query-a100-470.log"),
                                    "    Power Readings\n"
                                    "        Power Management                  : Supported\n"
                                    "        Power Draw                        : 56.44 W\n",
                                    "    GPU Power Readings\n"
                                    "        Average Power Draw                : 333.50 W\n"
                                    "        Instantaneous Power Draw          : 341.00 W\n");
  const auto r = import_logs({write_text(fs::path(tmp.path()) / "gpu.log", text)}, utc());
  EXPECT_EQ(r.at(0, 0).get(Metric::PowerW), 333.5);
  EXPECT_EQ(r.at(0, 0).get(Metric::PowerAverageW), 333.5);
  EXPECT_EQ(r.at(0, 0).get(Metric::PowerInstantW), 341);
}

// Volta and before count ECC errors by kind, each "Single Bit"/"Double Bit" with its "Total".
TEST(SmiQuery, TheOlderEccLayoutIsReadFromItsTotals) {
  gpuscope::testing::TempDir tmp;
  std::string text = read_text(kLogs / "smi-query-a100-470.log");
  const std::string volatile_new =
      "        Volatile\n"
      "            SRAM Correctable              : 0\n"
      "            SRAM Uncorrectable            : 0\n"
      "            DRAM Correctable              : 3\n"
      "            DRAM Uncorrectable            : 0\n";
  text = replaced(text, volatile_new,
                  "        Volatile\n"
                  "            Single Bit\n"
                  "                Device Memory     : 4\n"
                  "                Register File     : 1\n"
                  "                Total             : 5\n"
                  "            Double Bit\n"
                  "                Device Memory     : 2\n"
                  "                Total             : 2\n");
  const auto r = import_logs({write_text(fs::path(tmp.path()) / "gpu.log", text)}, utc());
  EXPECT_EQ(r.health_of(0).at(0).get(HealthMetric::EccCorrectedVolatile), 5);
  EXPECT_EQ(r.health_of(0).at(0).get(HealthMetric::EccUncorrectedVolatile), 2);
}

TEST(SmiQuery, ADamagedValueIsRefusedWithItsLineAndNothingWritten) {
  gpuscope::testing::TempDir tmp;
  const std::string fixture = read_text(kLogs / "smi-query-2xh100-580.log");
  const std::string text = replaced(fixture, ": 70.25 W", ": lots W");
  const fs::path log = write_text(fs::path(tmp.path()) / "gpu.log", text);
  const fs::path out = fs::path(tmp.path()) / "out.db";
  int code = 0;
  const std::string error = import_error({log}, utc(), &code);
  EXPECT_EQ(code, 2);
  const std::string where = fmt::format("gpu.log:{}: ", line_of(text, "lots W"));
  EXPECT_NE(error.find(where + "'lots W' is no value of GPU Power Readings/Power Draw"),
            std::string::npos)
      << error;
  const std::string reason =
      replaced(fixture, "Not Active\n        HW Slowdown", "Maybe\n        HW Slowdown");
  const fs::path bad_reason = write_text(fs::path(tmp.path()) / "reason.log", reason);
  EXPECT_NE(import_error({bad_reason}, utc())
                .find(fmt::format("reason.log:{}: 'Maybe' is no state of the clock event reason "
                                  "SW Power Cap",
                                  line_of(reason, "Maybe"))),
            std::string::npos)
      << import_error({bad_reason}, utc());
}

TEST(SmiQuery, AGpuThatChangesItsPlaceBetweenBlocksIsRefused) {
  gpuscope::testing::TempDir tmp;
  std::string text = read_text(kLogs / "smi-query-2xh100-580.log");
  const std::size_t second = text.find("NVSMI LOG", text.find("NVSMI LOG") + 1);
  text.replace(text.find("GPU 00000000:47:00.0", second), 20, "GPU 00000000:C7:00.0");
  const std::string error =
      import_error({write_text(fs::path(tmp.path()) / "moved.log", text)}, utc());
  EXPECT_NE(error.find("GPU 00000000:C7:00.0 (the block's GPU number 1)"), std::string::npos)
      << error;
  EXPECT_NE(error.find("00000000:47:00.0 in earlier blocks"), std::string::npos) << error;
}

TEST(SmiQuery, RecognisedFromItsContentAndNotConfusedWithOtherText) {
  gpuscope::testing::TempDir tmp;
  EXPECT_EQ(import_error({kLogs / "smi-query-a100-470.log"}), "");
  const fs::path other = write_text(fs::path(tmp.path()) / "notes.txt",
                                    "==============NVSMI LOG==============\nthe job started\n");
  const std::string error = import_error({other});
  EXPECT_NE(error.find("nvidia-smi-query"), std::string::npos) << error;
  ReadOptions forced = utc();
  forced.format = "nvidia-smi-query";
  EXPECT_NE(import_error({other}, forced).find("notes.txt:2: 'the job started' is no line"),
            std::string::npos)
      << import_error({other}, forced);
  // The table's log is not read as the query's.
  EXPECT_NE(import_error({kLogs / "smi-table-v100-418.log"}, forced).find("is no line"),
            std::string::npos);
}

}  // namespace
}  // namespace gpuscope::ingest::test
