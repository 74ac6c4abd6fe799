// nvidia-smi dmon logs through the ingest layer: the H200's real output (text, csv, GPM) and
// the fixtures written to NVIDIA's documented layout (tests/fixtures/logs/README.md), read back
// from the run database the import wrote.
#include <gtest/gtest.h>

#include "log_import.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::ingest::test {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr std::int64_t k224022 = 1795646422 * kSecond;  // 2026-11-25 22:40:22 UTC
constexpr std::int64_t k224011 = 1795646411 * kSecond;

ReadOptions utc() {
  ReadOptions o;
  o.timezone = "UTC";
  return o;
}

TEST(SmiDmon, TheH200TextLogGivesItsValuesInGpuscopesUnits) {
  const auto r = import_logs({kH200 / "smi-dmon.txt"}, utc());
  ASSERT_EQ(r.runs.size(), 1U);
  ASSERT_EQ(r.samples.size(), 1U) << "one GPU";
  EXPECT_EQ(r.count(0), 31U);
  const SampleRow* row = nullptr;
  for (const auto& s : r.samples.at(0)) {
    if (s.wall_ns == k224022) row = &s;
  }
  ASSERT_NE(row, nullptr) << "a sample at 22:40:22 UTC";
  EXPECT_EQ(row->get(Metric::PowerW), 694);
  EXPECT_EQ(row->get(Metric::TemperatureC), 64);
  EXPECT_EQ(row->get(Metric::MemoryTemperatureC), 51);
  EXPECT_EQ(row->get(Metric::GpuUtilPct), 100) << "dmon's sm is utilization.gpu";
  EXPECT_EQ(row->get(Metric::MemUtilPct), 24);
  EXPECT_EQ(row->get(Metric::MemClockMhz), 3201);
  EXPECT_EQ(row->get(Metric::GraphicsClockMhz), 1470);
  EXPECT_EQ(row->get(Metric::MemoryUsedBytes), 1139 * kMiB);
  EXPECT_EQ(row->get(Metric::PcieRxBytesPerS), 46 * kMiB);
  EXPECT_EQ(row->get(Metric::PcieTxBytesPerS), 24 * kMiB);
  EXPECT_FALSE(row->get(Metric::SmActivePct)) << "no GPM columns";
  EXPECT_FALSE(row->get(Metric::EnergyMj));
  EXPECT_EQ(r.at(0, 0).wall_ns, k224011);
  EXPECT_TRUE(r.note_has({"no column", "pviol", "tviol", "jpg", "bar1"}));
  EXPECT_TRUE(r.note_has({"local times read in UTC"}));
  EXPECT_TRUE(r.problem_has("no energy counter"));
  EXPECT_TRUE(r.problem_has("no SM, tensor or DRAM activity"));
}

TEST(SmiDmon, TheCsvVariantWithoutTimesTakesTheGivenStartAndInterval) {
  ReadOptions o = utc();
  o.start = "2026-11-25 22:40:11";
  o.interval_s = 2;
  const auto r = import_logs({kH200 / "smi-dmon.csv"}, o);
  ASSERT_EQ(r.count(0), 31U);
  for (std::size_t k = 0; k < 31; ++k) {
    EXPECT_EQ(r.at(0, k).wall_ns, k224011 + static_cast<std::int64_t>(k) * 2 * kSecond) << k;
  }
  EXPECT_EQ(r.at(0, 0).get(Metric::PcieRxBytesPerS), 34 * kMiB);
  EXPECT_EQ(r.at(0, 0).get(Metric::PowerW), 81);
  EXPECT_EQ(r.runs[0].info.sampling_interval_ns, 2 * kSecond);
  EXPECT_TRUE(r.note_has({"--log-start 2026-11-25 22:40:11"}));
  EXPECT_TRUE(r.problem_has("no timestamps"));
}

TEST(SmiDmon, GpmColumnsFillTheSaturationMetrics) {
  const auto r = import_logs({kH200 / "smi-dmon-gpm.txt"});
  ASSERT_EQ(r.count(0), 32U);
  EXPECT_FALSE(r.at(0, 0).get(Metric::SmActivePct)) << "'-' before GPM's second snapshot";
  EXPECT_FALSE(r.at(0, 1).get(Metric::TensorActivePct));
  EXPECT_EQ(r.at(0, 2).get(Metric::SmActivePct), 0);
  const auto& busy = r.at(0, 17);  // line 20 of the file
  EXPECT_EQ(busy.get(Metric::GraphicsActivePct), 99);
  EXPECT_EQ(busy.get(Metric::SmActivePct), 96);
  EXPECT_EQ(busy.get(Metric::SmOccupancyPct), 14);
  EXPECT_EQ(busy.get(Metric::IntegerActivePct), 1);
  EXPECT_EQ(busy.get(Metric::TensorActivePct), 93);
  EXPECT_EQ(busy.get(Metric::DramActivePct), 17);
  EXPECT_EQ(busy.get(Metric::Fp16ActivePct), 0);
  EXPECT_EQ(r.devices.at(0).saturation_source, "gpm");
  EXPECT_TRUE(r.note_has({"smutil has no value", "in 2 rows"}));
  EXPECT_TRUE(r.note_has({"dmon's default -d 1"}));
  EXPECT_FALSE(r.problem_has("no SM, tensor or DRAM activity"));
}

TEST(SmiDmon, EightGpusWithAnAppendedRestartAndAFailedRead) {
  const auto r = import_logs({kLogs / "smi-dmon-multi.txt"}, utc());
  ASSERT_EQ(r.runs.size(), 1U);
  ASSERT_EQ(r.samples.size(), 8U);
  for (unsigned g = 0; g < 8; ++g) EXPECT_EQ(r.count(g), 20U) << g;
  const std::int64_t t091410 = 1795684450 * kSecond;
  bool seen = false;
  for (const auto& s : r.samples.at(5)) {
    if (s.wall_ns != t091410) continue;
    seen = true;
    EXPECT_FALSE(s.get(Metric::PowerW)) << "'-' is NULL, not 0";
    EXPECT_EQ(s.get(Metric::GpuUtilPct), 100);
  }
  EXPECT_TRUE(seen);
  EXPECT_EQ(r.at(4, 0).get(Metric::PowerW), 72);
  EXPECT_TRUE(r.note_has({"pwr has no value", "in 1 row"}));
  EXPECT_TRUE(r.note_has({"header repeats at line 99"}));
  EXPECT_EQ(r.runs[0].info.sampling_interval_ns, kSecond);
}

TEST(SmiDmon, NoTimesEndAtTheFilesModificationTime) {
  gpuscope::testing::TempDir tmp;
  const auto log =
      write_text(fs::path(tmp.path()) / "noopt.txt", read_text(kLogs / "smi-dmon-noopt.txt"));
  set_modified(log, 1795646411);
  const auto r = import_logs({log});
  ASSERT_EQ(r.samples.size(), 2U);
  EXPECT_EQ(r.count(0), 15U);
  EXPECT_EQ(r.count(1), 15U);
  EXPECT_EQ(r.at(0, 14).wall_ns, k224011) << "the last tick at the file's end";
  EXPECT_EQ(r.at(1, 0).wall_ns, k224011 - 14 * kSecond) << "ticks 1 s apart";
  EXPECT_FALSE(r.at(0, 3).get(Metric::MemoryTemperatureC)) << "mtemp '-' on GDDR";
  EXPECT_EQ(r.at(0, 0).get(Metric::PowerW), 35);
  EXPECT_TRUE(r.note_has({"mtemp has no value", "in 30 rows"}));
  EXPECT_TRUE(r.note_has({"modification time"}));
}

TEST(SmiDmon, TimesWithoutDatesRollOverAtMidnight) {
  ReadOptions o = utc();
  o.start = "2026-11-25 23:00:00";
  const auto r = import_logs({kLogs / "smi-dmon-t-midnight.txt"}, o);
  ASSERT_EQ(r.count(1), 6U);
  const std::int64_t t235957 = 1795651197 * kSecond;
  EXPECT_EQ(r.at(0, 0).wall_ns, t235957);
  EXPECT_EQ(r.at(0, 3).wall_ns, t235957 + 3 * kSecond) << "00:00:00 is the next day";
  EXPECT_EQ(r.at(1, 5).wall_ns, t235957 + 6 * kSecond);
  EXPECT_TRUE(r.note_has({"first day 2026-11-25"}));
  // Without --log-start: the file's modification date, less the midnight the log passed.
  gpuscope::testing::TempDir tmp;
  const auto log =
      write_text(fs::path(tmp.path()) / "t.txt", read_text(kLogs / "smi-dmon-t-midnight.txt"));
  set_modified(log, 1795651197 + 7);  // 2026-11-26 00:00:04 UTC
  const auto m = import_logs({log}, utc());
  EXPECT_EQ(m.at(0, 0).wall_ns, t235957);
  EXPECT_EQ(m.at(1, 4).wall_ns, t235957 + 4 * kSecond);
  EXPECT_TRUE(m.note_has({"modification date"}));
}

TEST(SmiDmon, ChangedColumnsAndShortRowsOfDashes) {
  gpuscope::testing::TempDir tmp;
  const auto log = write_text(fs::path(tmp.path()) / "changed.txt",
                              "# gpu    pwr     sm  zzz \n"
                              "# Idx      W      %  abc \n"
                              "    0     80     10    1 \n"
                              "    0     -      - \n"
                              "    0     82     12    1 \n"
                              "# gpu    pwr     fb \n"
                              "# Idx      W     MB \n"
                              "    0    300   2048 \n");
  const auto r = import_logs({log});
  ASSERT_EQ(r.count(0), 3U) << "the short row of '-' left out";
  EXPECT_EQ(r.at(0, 1).get(Metric::GpuUtilPct), 12);
  EXPECT_EQ(r.at(0, 2).get(Metric::PowerW), 300);
  EXPECT_EQ(r.at(0, 2).get(Metric::MemoryUsedBytes), 2048 * kMiB);
  EXPECT_FALSE(r.at(0, 2).get(Metric::GpuUtilPct));
  EXPECT_EQ(r.at(0, 2).wall_ns - r.at(0, 0).wall_ns, 3 * kSecond) << "the short row was a tick";
  EXPECT_TRUE(r.note_has({"other columns from line 6"}));
  EXPECT_TRUE(r.note_has({"not understood", "zzz"}));
  EXPECT_TRUE(r.note_has({"1 row left out", "short rows"}));
}

TEST(SmiDmon, ACutOffLastLineIsANoteAndAMalformedLineAnError) {
  gpuscope::testing::TempDir tmp;
  std::string text = read_text(kH200 / "smi-dmon.txt");
  const auto cut = write_text(fs::path(tmp.path()) / "cut.txt", text.substr(0, text.size() - 40));
  const auto r = import_logs({cut}, utc());
  EXPECT_EQ(r.count(0), 30U);
  EXPECT_TRUE(r.note_has({"cut.txt:33", "cut off"}));

  std::string damaged = text;
  damaged.insert(damaged.find(" 20261125    22:40:13"), " 20261125    22:40:12   0  81  oops\n");
  const auto bad = write_text(fs::path(tmp.path()) / "bad.txt", damaged);
  int code = 0;
  const auto message = import_error({bad}, utc(), &code);
  EXPECT_NE(message.find("bad.txt:5"), std::string::npos) << message;
  EXPECT_EQ(code, 2);
}

TEST(SmiDmon, CrlfLineEndsReadTheSame) {
  gpuscope::testing::TempDir tmp;
  const auto log =
      write_text(fs::path(tmp.path()) / "crlf.txt", crlf(read_text(kH200 / "smi-dmon.txt")));
  const auto r = import_logs({log}, utc());
  ASSERT_EQ(r.count(0), 31U);
  EXPECT_EQ(r.at(0, 10).wall_ns, k224022);
  EXPECT_EQ(r.at(0, 10).get(Metric::PowerW), 694);
  EXPECT_EQ(r.at(0, 10).get(Metric::PcieTxBytesPerS), 24 * kMiB);
}

TEST(SmiDmon, AFileThatIsNoLogIsNotRecognised) {
  gpuscope::testing::TempDir tmp;
  const auto other = write_text(fs::path(tmp.path()) / "notes.txt", "# gpu notes\nnothing here\n");
  int code = 0;
  const auto message = import_error({other}, {}, &code);
  EXPECT_FALSE(message.empty());
  EXPECT_EQ(code, 2) << message;
}

}  // namespace
}  // namespace gpuscope::ingest::test
