// dcgmi dmon logs through the ingest layer: fixtures written to DCGM's documented layouts
// (tests/fixtures/logs/README.md), read back from the run database the import wrote. Values go
// through dcgm/fields.hpp as in live DCGM sampling: ratios to percent, MiB to bytes.
#include <gtest/gtest.h>

#include "core/mig.hpp"
#include "ingest/logs/dcgmi_dmon_format.hpp"
#include "log_import.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::ingest::test {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr std::int64_t k224011 = 1795646411 * kSecond;  // 2026-11-25 22:40:11 UTC

ReadOptions started(double interval_s = 1) {
  ReadOptions o;
  o.timezone = "UTC";
  o.start = "2026-11-25 22:40:11";
  o.interval_s = interval_s;
  return o;
}

TEST(DcgmiDmon, FourGpusWithRepeatedHeadersAndTheStopMessage) {
  const auto r = import_logs({kLogs / "dcgmi-dmon-basic.txt"}, started());
  ASSERT_EQ(r.runs.size(), 1U);
  ASSERT_EQ(r.samples.size(), 4U);
  for (unsigned g = 0; g < 4; ++g) EXPECT_EQ(r.count(g), 30U) << "headers are not rows: " << g;
  const auto& busy = r.at(1, 14);  // tick 15, the row before the first repeated header
  EXPECT_DOUBLE_EQ(*busy.get(Metric::PowerW), 687.789);
  EXPECT_EQ(busy.get(Metric::TemperatureC), 45);
  EXPECT_EQ(busy.get(Metric::GpuUtilPct), 100);
  EXPECT_EQ(busy.get(Metric::MemoryUsedBytes), 71746 * kMiB);
  EXPECT_NEAR(*busy.get(Metric::SmActivePct), 96.3, 1e-9) << "ratio to percent";
  EXPECT_NEAR(*busy.get(Metric::TensorActivePct), 59.7, 1e-9);
  EXPECT_NEAR(*busy.get(Metric::DramActivePct), 31.6, 1e-9);
  EXPECT_FALSE(r.at(0, 0).get(Metric::SmActivePct)) << "N/A is NULL";
  EXPECT_EQ(r.at(0, 0).get(Metric::GpuUtilPct), 0);
  EXPECT_FALSE(r.at(3, 1).get(Metric::TensorActivePct));
  EXPECT_TRUE(r.at(3, 1).get(Metric::SmActivePct));
  EXPECT_FALSE(r.at(2, 16).get(Metric::PowerW));
  EXPECT_TRUE(r.note_has({"POWER has no value", "N/A in 2 rows"}));
  EXPECT_TRUE(r.note_has({"TENSO has no value", "N/A in 5 rows"}));
  EXPECT_TRUE(r.note_has({"stopped by a signal"}));
  EXPECT_FALSE(r.note_has({"other columns"})) << "dcgmi's own repeats change nothing";
  for (unsigned g = 0; g < 4; ++g) EXPECT_EQ(r.devices.at(g).saturation_source, "dcgm");
  EXPECT_TRUE(r.problem_has("no energy counter"));
  EXPECT_TRUE(r.problem_has("no timestamps"));
}

TEST(DcgmiDmon, TimesAreTicksFromTheGivenStartAtTheGivenInterval) {
  const auto r = import_logs({kLogs / "dcgmi-dmon-basic.txt"}, started(2));
  for (unsigned g = 0; g < 4; ++g) {
    for (std::size_t k = 0; k < 30; ++k) {
      EXPECT_EQ(r.at(g, k).wall_ns, k224011 + static_cast<std::int64_t>(k) * 2 * kSecond);
    }
  }
  EXPECT_EQ(r.runs[0].info.sampling_interval_ns, 2 * kSecond);
  // Without them: 1 s (dcgmi's default), the last tick at the file's modification time.
  gpuscope::testing::TempDir tmp;
  const auto log =
      write_text(fs::path(tmp.path()) / "b.txt", read_text(kLogs / "dcgmi-dmon-basic.txt"));
  set_modified(log, 1795646411);
  const auto m = import_logs({log});
  EXPECT_EQ(m.at(3, 29).wall_ns, k224011);
  EXPECT_EQ(m.at(0, 0).wall_ns, k224011 - 29 * kSecond);
  EXPECT_TRUE(m.note_has({"dcgmi's default -d 1000"}));
}

TEST(DcgmiDmon, TheOldLayoutWithTheEnergyCounter) {
  const auto r = import_logs({kLogs / "dcgmi-dmon-dcgm22.txt"}, started());
  ASSERT_EQ(r.samples.size(), 2U);
  EXPECT_EQ(r.count(0), 17U);
  EXPECT_EQ(r.count(1), 17U);
  double energy[] = {1000000, 1000007};  // mJ; the fixture adds each second's power
  for (std::size_t k = 0; k < 17; ++k) {
    for (unsigned g = 0; g < 2; ++g) {
      const double power = 60.5 + 10 * static_cast<double>(k) + g;
      EXPECT_EQ(r.at(g, k).get(Metric::EnergyMj), energy[g]) << g << " " << k;
      EXPECT_DOUBLE_EQ(*r.at(g, k).get(Metric::PowerW), power);
      energy[g] += power * 1000;
    }
  }
  EXPECT_FALSE(r.at(1, 3).get(Metric::GpuUtilPct));
  EXPECT_EQ(r.at(0, 3).get(Metric::GpuUtilPct), 21);
  EXPECT_EQ(r.at(1, 16).get(Metric::MemoryUsedBytes), 2049 * kMiB);
  EXPECT_EQ(r.at(1, 16).wall_ns, k224011 + 16 * kSecond) << "the repeated header is no tick";
  EXPECT_FALSE(r.problem_has("no energy counter"));
  EXPECT_TRUE(r.problem_has("no DCGM profiling fields"));
  EXPECT_FALSE(r.devices.at(0).saturation_source);
}

// dcgmi names a GPU instance by DCGM's entity id only: a device of its own, in core/mig's range
// for such instances, never an index is_mig_device_index() reads as GPU p's instance g (before:
// 1000 + entity id, so "GPU-I 7" was shown as "GPU 0 GI 7").
TEST(DcgmiDmon, MigInstancesAreDevicesOfTheirOwnNeverMisreadAsLinked) {
  const auto r = import_logs({kLogs / "dcgmi-dmon-mig.txt"}, started());
  std::vector<unsigned> indices;
  for (const auto& [index, rows] : r.samples) {
    indices.push_back(index);
    EXPECT_EQ(rows.size(), 10U) << index;
  }
  EXPECT_EQ(indices, (std::vector<unsigned>{0, 1, 10000, 10001, 10002, 10007, 10008}));
  for (const unsigned index : indices) {
    EXPECT_FALSE(is_mig_device_index(index)) << index << " would be read as a linked MIG device";
  }
  EXPECT_EQ(device_index_label(10007), "DCGM GPU instance 7");
  EXPECT_EQ(device_index_label(1), "GPU 1");
  EXPECT_EQ(r.devices.at(10007).name, "MIG GPU instance 7 (DCGM id)");
  EXPECT_FALSE(r.devices.at(10007).mig) << "no GPU or GPU instance id is known to link it";
  EXPECT_EQ(r.devices.at(0).name, "");
  EXPECT_NEAR(*r.at(10000, 1).get(Metric::SmActivePct), 91.0, 1e-9);
  EXPECT_NEAR(*r.at(10000, 1).get(Metric::TensorActivePct), 55.5, 1e-9);
  for (const auto& row : r.samples.at(10002)) EXPECT_FALSE(row.get(Metric::SmActivePct));
  EXPECT_EQ(r.at(10001, 9).wall_ns, k224011 + 9 * kSecond) << "out-of-order ids share a tick";
  EXPECT_TRUE(
      r.note_has({"MIG GPU instances", "devices 10000 + their DCGM entity id", "parent GPU"}));
}

TEST(DcgmiDmon, ACutOffLastLineIsANote) {
  const auto r = import_logs({kLogs / "dcgmi-dmon-cut.txt"}, started());
  EXPECT_EQ(r.count(0), 24U);
  EXPECT_EQ(r.count(1), 23U) << "its cut-off row left out";
  EXPECT_EQ(r.count(3), 23U);
  EXPECT_TRUE(r.note_has({"dcgmi-dmon-cut.txt:", "cut off"}));
}

TEST(DcgmiDmon, BlankTrailingFieldsOtherEntitiesAndChangedColumns) {
  gpuscope::testing::TempDir tmp;
  const auto log =
      write_text(fs::path(tmp.path()) / "mixed.txt",
                 "#Entity         POWER             GPUTL             SMACT        XYZZY  PVIOL  \n"
                 "ID               W                                                      \n"
                 "GPU 0           100.000           50                0.500        1      0      \n"
                 "CPU Core 12     N/A               N/A               N/A          2      N/A    \n"
                 "GPU 1           200.000           60                                           \n"
                 "GPU 0           101.000           51                0.510        1      0      \n"
                 "GPU 1           201.000                                                        \n"
                 "#Entity         TMPTR        FBTTL             \n"
                 "ID               C                             \n"
                 "GPU 0           40           81559             \n"
                 "GPU 0           41           81559             \n");
  const auto r = import_logs({log}, started());
  ASSERT_EQ(r.samples.size(), 2U);
  EXPECT_EQ(r.count(0), 4U);
  EXPECT_EQ(r.count(1), 2U);
  EXPECT_FALSE(r.at(1, 0).get(Metric::SmActivePct)) << "a blank field is NULL";
  EXPECT_FALSE(r.at(1, 1).get(Metric::GpuUtilPct));
  EXPECT_DOUBLE_EQ(*r.at(1, 1).get(Metric::PowerW), 201);
  EXPECT_EQ(r.at(0, 3).get(Metric::TemperatureC), 41);
  EXPECT_FALSE(r.at(0, 3).get(Metric::PowerW));
  EXPECT_EQ(r.at(0, 3).wall_ns, k224011 + 3 * kSecond);
  EXPECT_EQ(r.devices.at(0).memory_total_bytes, static_cast<std::uint64_t>(81559 * kMiB));
  EXPECT_TRUE(r.note_has({"SMACT has no value", "DCGM returned no value", "2 rows"}));
  EXPECT_TRUE(r.note_has({"1 row left out", "CPU Core 12"}));
  EXPECT_TRUE(r.note_has({"not understood", "XYZZY"}));
  EXPECT_EQ(r.health.at(0).size(), 2U) << "PVIOL (240) is a health counter";
  EXPECT_EQ(r.health.at(0)[0].get(HealthMetric::ViolationPowerNs), 0.0);
  EXPECT_EQ(r.health.count(1), 0U) << "N/A and blank: no health row";
  EXPECT_TRUE(r.note_has({"other columns from line 8"}));
}

TEST(DcgmiDmon, AMalformedLineIsAnErrorNamingIt) {
  gpuscope::testing::TempDir tmp;
  std::string text = read_text(kLogs / "dcgmi-dmon-basic.txt");
  std::string damaged = text;
  damaged.insert(damaged.find("GPU 3"), "garbage 1 2\n");
  const auto bad = write_text(fs::path(tmp.path()) / "bad.txt", damaged);
  int code = 0;
  auto message = import_error({bad}, started(), &code);
  EXPECT_NE(message.find("bad.txt:6"), std::string::npos) << message;
  EXPECT_EQ(code, 2);
  std::string wide = text;
  wide.insert(wide.find("GPU 3"), "GPU 3  1 2 3 4 5 6 7 8\n");
  message = import_error({write_text(fs::path(tmp.path()) / "wide.txt", wide)}, started());
  EXPECT_NE(message.find("wide.txt:6: 8 values"), std::string::npos) << message;
}

TEST(DcgmiDmon, CrlfLineEndsReadTheSame) {
  gpuscope::testing::TempDir tmp;
  const auto log = write_text(fs::path(tmp.path()) / "crlf.txt",
                              crlf(read_text(kLogs / "dcgmi-dmon-basic.txt")));
  const auto r = import_logs({log}, started());
  EXPECT_EQ(r.count(2), 30U);
  EXPECT_DOUBLE_EQ(*r.at(1, 14).get(Metric::PowerW), 687.789);
  EXPECT_NEAR(*r.at(1, 14).get(Metric::DramActivePct), 31.6, 1e-9);
}

}  // namespace
}  // namespace gpuscope::ingest::test
