// Local times in logs (docs/logs.md, "Times and zones"): the zone files read by util::TimeZone
// against the C library (GNU date, a child process, with TZ set in its own environment), the
// zone names refused, conversions on several threads that leave the process's TZ alone, and the
// nights the clocks change: a log that begins inside a repeated hour, a time that was skipped.
#include "ingest/logs/local_time.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "log_import.hpp"
#include "util/time_zone.hpp"

namespace gpuscope::ingest {
namespace {

namespace fs = std::filesystem;
using test::import_error;
using test::import_logs;
using test::kSecond;
using test::write_text;

const fs::path kZoneinfo = "/usr/share/zoneinfo";

util::TimeZone zone_file(const std::string& name) {
  std::ifstream in(kZoneinfo / name, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto zone = util::TimeZone::from_tzif(bytes);
  if (!zone) ADD_FAILURE() << name << ": " << zone.error();
  return zone ? *zone : util::TimeZone::fixed(0);
}

// Seconds east of UTC as GNU date prints %z ("+0530", "-0100").
std::int64_t offset_of(const std::string& z) {
  const std::int64_t hours = std::stoll(z.substr(1, 2)), minutes = std::stoll(z.substr(3, 2));
  return (z[0] == '-' ? -1 : 1) * (hours * 3600 + minutes * 60);
}

// "SECONDS OFFSET" lines for the instants of `list`, as GNU date prints them in zone `name` (a
// child process: its TZ is its own).
std::string c_library_offsets(const std::string& name, const fs::path& list) {
  const std::string command = fmt::format("TZ=:{} date -f {} '+%s %z'", name,
                                          list.string());  // names of tzdata: no quoting
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {};
  std::string out;
  char buffer[65536];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  EXPECT_EQ(pclose(pipe), 0) << command;
  return out;
}

// Instants that probe a zone: every quarter boundary of each hour (both sides of a change at
// :00 or :30) in years of its table, of its end and of its POSIX rule far after, and a week
// apart from 1970 to 2200.
std::vector<std::int64_t> probe_instants() {
  std::vector<std::int64_t> out;
  for (const int year : {1985, 2026, 2040, 2199}) {
    const std::int64_t start = util::days_from_civil(year, 1, 1) * 86400;
    for (std::int64_t hour = 0; hour < 366 * 24; ++hour) {
      for (const std::int64_t s : {0, 1799, 1800, 3599}) out.push_back(start + hour * 3600 + s);
    }
  }
  for (std::int64_t t = 43200; t < util::days_from_civil(2200, 1, 1) * 86400; t += 7 * 86400) {
    out.push_back(t);
  }
  return out;
}

TEST(TimeZone, OffsetsEqualTheCLibrarysForManyZonesFarIntoTheFuture) {
  // North and south, half-hour and 45-minute offsets, a 30-minute change (Lord Howe), rule times
  // past midnight and before it (Santiago's 24, Nuuk's -1), no summer time (Kolkata), a table
  // to 2087 (Casablanca), a negative save (Dublin's winter "daylight" time).
  const std::vector<std::string> zones = {
      "Europe/Zurich",     "America/New_York",    "Australia/Sydney", "America/Santiago",
      "America/Nuuk",      "Australia/Lord_Howe", "Pacific/Chatham",  "Asia/Kolkata",
      "America/Sao_Paulo", "Africa/Casablanca",   "Europe/Dublin"};
  const auto instants = probe_instants();
  gpuscope::testing::TempDir tmp;
  const fs::path list = fs::path(tmp.path()) / "instants";
  {
    std::ofstream out(list);
    for (const auto t : instants) out << '@' << t << '\n';
  }
  std::size_t compared = 0;
  for (const auto& name : zones) {
    if (!fs::exists(kZoneinfo / name)) continue;
    const auto zone = zone_file(name);
    std::istringstream lines(c_library_offsets(name, list));
    std::string printed_s, z;  // date's %s is its own round trip, off in repeated hours: unused
    std::size_t wrong = 0, k = 0;
    for (; k < instants.size() && lines >> printed_s >> z; ++k) {
      const std::int64_t t = instants[k];
      const std::int64_t offset = zone.offset_at(t);
      if (offset != offset_of(z) && wrong++ < 5) {
        ADD_FAILURE() << name << " at " << t << ": " << offset << " s, the C library " << z;
      }
      // Back: the local reading of t is one of t's (two where the clocks went back).
      const auto back = zone.utc_of_local(t + offset);
      if (std::find(back.begin(), back.end(), t) == back.end() && wrong++ < 5) {
        ADD_FAILURE() << name << " at " << t << ": its local time does not lead back to it";
      }
    }
    EXPECT_EQ(k, instants.size()) << name;
    compared += k;
  }
  EXPECT_GE(compared, instants.size()) << "no zone of tzdata was found";
}

TEST(TimeZone, ChangesAreOneReadingTwoOrNone) {
  if (!fs::exists(kZoneinfo / "Europe/Zurich")) GTEST_SKIP() << "no tzdata";
  const auto zurich = zone_file("Europe/Zurich");
  const std::int64_t oct25 = util::days_from_civil(2026, 10, 25) * 86400;
  // 02:10 on 2026-10-25 comes twice: 00:10 UTC (summer time), 01:10 UTC.
  EXPECT_EQ(zurich.utc_of_local(oct25 + 2 * 3600 + 600),
            (std::vector<std::int64_t>{oct25 + 600, oct25 + 3600 + 600}));
  // 02:30 on 2026-03-29 does not exist; 03:30 is 01:30 UTC.
  const std::int64_t mar29 = util::days_from_civil(2026, 3, 29) * 86400;
  EXPECT_TRUE(zurich.utc_of_local(mar29 + 2 * 3600 + 1800).empty());
  EXPECT_EQ(zurich.utc_of_local(mar29 + 3 * 3600 + 1800),
            (std::vector<std::int64_t>{mar29 + 3600 + 1800}));
  // The same in 2150, long after the table: the footer's rule (last Sunday of October).
  const std::int64_t oct2150 = util::days_from_civil(2150, 10, 25) * 86400;
  EXPECT_EQ(zurich.utc_of_local(oct2150 + 2 * 3600 + 600).size(), 2U);
  const auto rule = util::TimeZone::from_posix("CET-1CEST,M3.5.0,M10.5.0/3");
  ASSERT_TRUE(rule);
  EXPECT_EQ(rule->offset_at(oct25 + 599), 7200);
  EXPECT_EQ(rule->offset_at(oct25 + 3600), 3600);
  EXPECT_FALSE(util::TimeZone::from_posix("CET-1CEST,M13.5.0,M10.5.0/3"));
  EXPECT_FALSE(util::TimeZone::from_tzif("TZif2 but nothing more"));
}

TEST(LocalZone, NamesThatAreNoZoneAreRefused) {
  for (const std::string name : {"../../etc/passwd", "/etc/passwd", "Europe/../../etc/passwd",
                                 "Europe//Zurich", "Europe/Zurich\n", "."}) {
    try {
      LocalZone zone(name);
      ADD_FAILURE() << name << " was taken as a zone";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), 2);
      EXPECT_NE(std::string(e.what()).find("--timezone"), std::string::npos) << e.what();
    }
  }
  // A file of the zone folder that is no zone.
  if (fs::exists(kZoneinfo / "zone.tab")) {
    EXPECT_THROW(LocalZone("zone.tab"), Error);
  }
}

// Converting never sets TZ: the process's environment string is the same one after, and a
// thread reading TZ and localtime_r meanwhile sees neither change.
TEST(LocalZone, ConvertsOnThreadsWithoutTouchingTheProcesssZone) {
  if (!fs::exists(kZoneinfo / "America/New_York")) GTEST_SKIP() << "no tzdata";
  const char* saved = std::getenv("TZ");
  const std::string saved_value = saved != nullptr ? saved : "";
  setenv("TZ", "UTC", 1);  // before any thread starts
  tzset();
  const char* tz_before = std::getenv("TZ");
  {
    LocalZone zone("America/New_York");
    ASSERT_EQ(zone.to_utc_ns({2026, 7, 1, 12, 0, 0}), 1782921600LL * kSecond);  // 16:00 UTC
    EXPECT_EQ(std::getenv("TZ"), tz_before) << "TZ was set again while converting";
  }
  std::atomic<bool> done{false};
  std::atomic<int> disturbed{0};
  std::thread watcher([&] {
    const std::time_t noon = 1782907200;  // 2026-07-01 12:00 UTC
    while (!done.load()) {
      const char* tz = std::getenv("TZ");
      std::tm tm{};
      localtime_r(&noon, &tm);
      if (tz == nullptr || std::string(tz) != "UTC" || tm.tm_hour != 12) ++disturbed;
    }
  });
  std::vector<std::thread> converters;
  std::atomic<int> wrong{0};
  for (const std::string name : {"Europe/Zurich", "America/New_York", "Asia/Kolkata"}) {
    converters.emplace_back([&, name] {
      LocalZone zone(name);
      for (int minute = 0; minute < 20000; ++minute) {  // every conversion a new minute
        const auto ns =
            zone.to_utc_ns({2026, 1, 1 + minute / 1440, minute / 60 % 24, minute % 60, 0});
        if (!ns || *ns / kSecond % 60 != 0) ++wrong;
      }
    });
  }
  for (auto& t : converters) t.join();
  done = true;
  watcher.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(disturbed.load(), 0) << "another thread saw TZ or its local time change";
  EXPECT_EQ(std::getenv("TZ"), tz_before);
  if (saved != nullptr) {
    setenv("TZ", saved_value.c_str(), 1);
  } else {
    unsetenv("TZ");
  }
  tzset();
}

// An nvidia-smi CSV log of GPU 0's power at these local times; without `index`, its GPUs are read
// from its ticks (its rows held, then read again: the zone must place them the same way twice).
fs::path csv_log(const fs::path& folder, const std::string& name,
                 const std::vector<std::string>& times, bool index = true) {
  std::string text = index ? "timestamp, index, power.draw [W]\n" : "timestamp, power.draw [W]\n";
  for (const auto& t : times) text += t + (index ? ".000, 0, 100.00 W\n" : ".000, 100.00 W\n");
  return write_text(folder / name, text);
}

// "2026/10/25 HH:MM:00" for minutes counted from midnight.
std::vector<std::string> clock_times(const std::vector<int>& minutes) {
  std::vector<std::string> out;
  for (const int m : minutes)
    out.push_back(fmt::format("2026/10/25 {:02}:{:02}:00", m / 60, m % 60));
  return out;
}

ReadOptions in_zurich() {
  ReadOptions o;
  o.timezone = "Europe/Zurich";
  return o;
}

constexpr std::int64_t kOct25 = 1792886400;  // 2026-10-25 00:00 UTC; Zurich repeats 02:00-02:59

TEST(LocalZone, ALogBeginningInTheFirstPassOfTheRepeatedHourIsPlacedByItsReturn) {
  if (!fs::exists(kZoneinfo / "Europe/Zurich")) GTEST_SKIP() << "no tzdata";
  gpuscope::testing::TempDir tmp;
  // 02:10 ... 02:50 in summer time, then 02:00 ... 03:10 after the clocks went back; rows read
  // as they come (an index column) and rows held for the ticks, then read again.
  for (const bool index : {true, false}) {
    const auto log = import_logs(
        {csv_log(tmp.path(), index ? "first.csv" : "first-noindex.csv",
                 clock_times({130, 140, 150, 160, 170, 120, 130, 140, 150, 160, 170, 180, 190}),
                 index)},
        in_zurich());
    const auto& rows = log.samples.at(0);
    ASSERT_EQ(rows.size(), 13U);
    EXPECT_EQ(rows[0].wall_ns, (kOct25 + 600) * kSecond) << index;  // 02:10 CEST = 00:10 UTC
    for (std::size_t i = 1; i < rows.size(); ++i) {
      EXPECT_EQ(rows[i].wall_ns - rows[i - 1].wall_ns, 600 * kSecond) << "row " << i;
    }
  }
}

TEST(LocalZone, ALogBeginningInTheSecondPassIsPlacedByTheHourThatFollows) {
  if (!fs::exists(kZoneinfo / "Europe/Zurich")) GTEST_SKIP() << "no tzdata";
  gpuscope::testing::TempDir tmp;
  const auto log = import_logs(
      {csv_log(tmp.path(), "second.csv", clock_times({130, 140, 150, 160, 170, 180, 190}))},
      in_zurich());
  const auto& rows = log.samples.at(0);
  ASSERT_EQ(rows.size(), 7U);
  EXPECT_EQ(rows[0].wall_ns, (kOct25 + 3600 + 600) * kSecond);  // 02:10 CET = 01:10 UTC
  EXPECT_EQ(rows[6].wall_ns - rows[0].wall_ns, 3600 * kSecond);
}

TEST(LocalZone, ALogInsideTheRepeatedHourIsRefusedWithAHint) {
  if (!fs::exists(kZoneinfo / "Europe/Zurich")) GTEST_SKIP() << "no tzdata";
  gpuscope::testing::TempDir tmp;
  int exit_code = 0;
  const std::string e = import_error(
      {csv_log(tmp.path(), "inside.csv", clock_times({130, 140, 150}))}, in_zurich(), &exit_code);
  EXPECT_EQ(exit_code, 2);
  EXPECT_NE(e.find("inside.csv:2: 2026-10-25 02:10:00 comes twice in Europe/Zurich"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("--timezone as the fixed offset"), std::string::npos) << e;
  EXPECT_NE(e.find("+02:00 for the first pass, +01:00 for the second"), std::string::npos) << e;
  // With the offset given, the same log reads.
  ReadOptions fixed;
  fixed.timezone = "+02:00";
  EXPECT_EQ(import_logs({fs::path(tmp.path()) / "inside.csv"}, fixed).samples.at(0)[0].wall_ns,
            (kOct25 + 600) * kSecond);
}

TEST(LocalZone, ATimeTheClocksSkippedIsAnError) {
  if (!fs::exists(kZoneinfo / "Europe/Zurich")) GTEST_SKIP() << "no tzdata";
  gpuscope::testing::TempDir tmp;
  const auto file = csv_log(tmp.path(), "spring.csv",
                            {"2026/03/29 01:50:00", "2026/03/29 02:30:00", "2026/03/29 03:40:00"});
  const std::string e = import_error({file}, in_zurich());
  EXPECT_NE(e.find("spring.csv:3: 2026-03-29 02:30:00 does not exist in Europe/Zurich (the "
                   "clocks skipped that hour, from +01:00 to +02:00)"),
            std::string::npos)
      << e;
  // Without the skipped time the log reads, 01:50 CET to 03:40 CEST 50 minutes apart.
  const auto log = import_logs(
      {csv_log(tmp.path(), "spring-ok.csv", {"2026/03/29 01:50:00", "2026/03/29 03:40:00"})},
      in_zurich());
  EXPECT_EQ(log.samples.at(0)[1].wall_ns - log.samples.at(0)[0].wall_ns, 3000 * kSecond);
}

TEST(LocalZone, ADmonLogBeginningInTheRepeatedHourIsPlacedToo) {
  if (!fs::exists(kZoneinfo / "Europe/Zurich")) GTEST_SKIP() << "no tzdata";
  gpuscope::testing::TempDir tmp;
  std::string text = "#Date       Time        gpu    pwr\n#YYYYMMDD   HH:MM:SS    Idx      W\n";
  for (const int m : {150, 170, 125, 135}) {
    text += fmt::format(" 20261025   {:02}:{:02}:00      0    100\n", m / 60, m % 60);
  }
  const auto log = import_logs({write_text(fs::path(tmp.path()) / "dmon.log", text)}, in_zurich());
  const auto& rows = log.samples.at(0);
  ASSERT_EQ(rows.size(), 4U);
  EXPECT_EQ(rows[0].wall_ns, (kOct25 + 1800) * kSecond);        // 02:30 CEST
  EXPECT_EQ(rows[2].wall_ns, (kOct25 + 3600 + 300) * kSecond);  // 02:05 CET
}

TEST(LocalZone, ALogStartInTheRepeatedHourIsRefused) {
  if (!fs::exists(kZoneinfo / "Europe/Zurich")) GTEST_SKIP() << "no tzdata";
  LocalZone zone("Europe/Zurich");
  std::vector<std::string> notes;
  try {
    timeless_start_ns("dcgmi.log", "2026-10-25 02:30:00", zone, 10, kSecond, notes);
    ADD_FAILURE() << "an ambiguous --log-start was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--log-start 2026-10-25 02:30:00: 2026-10-25 02:30:00 "
                                         "comes twice in Europe/Zurich"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace gpuscope::ingest
