// nvidia-smi --query-gpu CSV logs through the ingest layer (docs/logs.md): the fixtures of
// tests/fixtures/logs (made by make_smi_csv_fixtures.py to nvidia-smi's documented output, each
// with the mess real logs carry) and the real H200 logs of tests/fixtures/h200-580, imported
// into a run database and read back with the store's reader.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/metric_ranges.hpp"
#include "ingest/import.hpp"
#include "ingest/logs/local_time.hpp"
#include "ingest/logs/log_ticks.hpp"
#include "store/run_reader.hpp"
#include "support/refusal.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::ingest {
namespace {

namespace fs = std::filesystem;
const fs::path kLogs = fs::path(GPUSCOPE_TEST_FIXTURE_DIR) / "logs";
const fs::path kH200 = fs::path(GPUSCOPE_TEST_FIXTURE_DIR) / "h200-580";
constexpr double kMiB = 1024.0 * 1024.0;

// An imported log: its summary, and every sample by (run, GPU) in time order.
struct Imported {
  ImportSummary summary;
  std::vector<store::StoredRun> runs;
  std::map<std::int64_t, std::vector<DeviceDescription>> devices;
  std::map<std::pair<std::int64_t, unsigned>, std::vector<SampleRow>> samples;

  const std::vector<SampleRow>& gpu(unsigned index, std::size_t run = 0) {
    return samples[{runs.at(run).run_id, index}];
  }
  bool noted(const std::string& words) const {
    for (const auto& n : summary.notes) {
      if (n.find(words) != std::string::npos) return true;
    }
    return false;
  }
  std::string notes() const {
    std::string out;
    for (const auto& n : summary.notes) out += n + "\n";
    return out;
  }
};

Imported import_log(const std::vector<fs::path>& inputs, ReadOptions options = {}) {
  testing::TempDir tmp;
  const fs::path db = fs::path(tmp.path()) / "log.db";
  if (options.timezone.empty()) options.timezone = "UTC";
  Imported out;
  out.summary = import_inputs(inputs, db, false, options);
  const auto reader = store::RunReader::open(db);
  out.runs = reader.runs();
  for (const auto& run : out.runs) out.devices[run.run_id] = reader.devices(run.run_id);
  reader.for_each_sample({}, [&](const store::RunSample& s) {
    out.samples[{s.run_id, s.row.device_index}].push_back(s.row);
  });
  return out;
}

double mean_of(const std::vector<SampleRow>& rows, Metric metric) {
  double sum = 0;
  std::size_t n = 0;
  for (const auto& r : rows) {
    if (auto v = r.get(metric)) {
      sum += *v;
      ++n;
    }
  }
  return n == 0 ? std::nan("") : sum / static_cast<double>(n);
}

std::string error_of(const std::vector<fs::path>& inputs, ReadOptions options = {}) {
  return testing::refusal_message([&] { import_log(inputs, std::move(options)); });
}

// A copy of `from` with `edit` applied to its text, in `tmp`.
fs::path edited(const testing::TempDir& tmp, const fs::path& from, const std::string& name,
                const std::function<void(std::string&)>& edit) {
  std::ifstream in(from, std::ios::binary);
  std::string text{std::istreambuf_iterator<char>(in), {}};
  edit(text);
  const fs::path out = fs::path(tmp.path()) / name;
  std::ofstream(out, std::ios::binary) << text;
  return out;
}

TEST(SmiCsv, FourGpusWithoutAGpuColumnAreToldApartByTheirTicks) {
  auto log = import_log({kLogs / "smi-csv-4gpu-noindex.csv"});
  ASSERT_EQ(log.runs.size(), 1U);
  ASSERT_EQ(log.devices.begin()->second.size(), 4U) << log.notes();
  EXPECT_TRUE(log.noted("4 GPUs read from the ticks")) << log.notes();
  EXPECT_TRUE(log.noted("smi-csv-4gpu-noindex.csv:50: the last line was cut off")) << log.notes();
  for (unsigned g = 0; g < 4; ++g) {
    const auto& rows = log.gpu(g);
    ASSERT_EQ(rows.size(), 12U) << "GPU " << g;
    // The fixture's rule: power 100 + 50 g + tick, memory (g + 1) GiB-ish in MiB, util 10 g.
    EXPECT_DOUBLE_EQ(mean_of(rows, Metric::PowerW), 100 + 50 * g + 5.5);
    EXPECT_DOUBLE_EQ(rows[3].get(Metric::MemoryUsedBytes).value(), 1000.0 * (g + 1) * kMiB);
    EXPECT_DOUBLE_EQ(rows[0].get(Metric::GpuUtilPct).value(), 10.0 * g);
    EXPECT_DOUBLE_EQ(rows[0].get(Metric::ClockEventReasons).value(), g == 3 ? 4.0 : 0.0)
        << "clocks_throttle_reasons.active is the older name of clocks_event_reasons.active";
  }
  EXPECT_EQ(log.devices.begin()->second[2].name, "NVIDIA A100-SXM4-80GB");
  EXPECT_NEAR(static_cast<double>(log.runs[0].info.sampling_interval_ns), 100e6, 1.5e6)
      << "ticks alternate 99 and 101 ms apart";
  EXPECT_EQ(log.runs[0].end.problems.size(), 2U) << "no GPM, and energy from integrated power";
}

TEST(SmiCsv, AGpuCountThatDisagreesWithTheTicksIsRefused) {
  ReadOptions options;
  options.gpus = 3;
  const std::string e = error_of({kLogs / "smi-csv-4gpu-noindex.csv"}, options);
  EXPECT_NE(e.find("--log-gpus 3 was given, but the log's ticks hold 4 rows each"),
            std::string::npos)
      << e;
}

TEST(SmiCsv, ATickMissingARowIsRefusedRatherThanMixingGpus) {
  testing::TempDir tmp;
  // Drop the third row of the sixth tick (line 2 + 5 * 4 + 2): which GPU is missing is unknown.
  const auto log = edited(tmp, kLogs / "smi-csv-4gpu-noindex.csv", "gap.csv", [](std::string& t) {
    std::size_t at = 0;
    for (int n = 1; n < 24; ++n) at = t.find('\n', at) + 1;
    t.erase(at, t.find('\n', at) + 1 - at);
  });
  const std::string e = error_of({log});
  EXPECT_NE(e.find("no count of rows per tick from 1 to"), std::string::npos) << e;
  ReadOptions options;
  options.gpus = 4;  // given: the shifted ticks are refused, from the one that lost its row
  const std::string given = error_of({log}, options);
  EXPECT_NE(given.find("from the tick at line 22 to the end, the rows do not fall into ticks of 4"),
            std::string::npos)
      << given;
}

TEST(SmiCsv, AppendedRunsWithWindowsLineEndsAndMissingValues) {
  auto log = import_log({kLogs / "smi-csv-appended.csv"});
  ASSERT_EQ(log.runs.size(), 1U);
  ASSERT_EQ(log.gpu(0).size(), 10U);
  ASSERT_EQ(log.gpu(1).size(), 10U);
  EXPECT_FALSE(log.gpu(1)[2].get(Metric::PowerW)) << "[N/A] is absent, never zero";
  EXPECT_DOUBLE_EQ(log.gpu(1)[3].get(Metric::PowerW).value(), 330.0);
  EXPECT_FALSE(log.gpu(0)[5].get(Metric::TemperatureC)) << "[Unknown Error] is absent";
  EXPECT_DOUBLE_EQ(log.gpu(0)[6].get(Metric::TemperatureC).value(), 41.0);
  // sw_power_cap Active from the fourth tick of each part: bit 0x4; hw_slowdown never.
  EXPECT_DOUBLE_EQ(log.gpu(0)[2].get(Metric::ClockEventReasons).value(), 0.0);
  EXPECT_DOUBLE_EQ(log.gpu(0)[3].get(Metric::ClockEventReasons).value(), 4.0);
  EXPECT_EQ(log.devices.begin()->second[1].uuid, "GPU-1aaaaaaa-1111-2222-3333-444444444444");
  EXPECT_TRUE(log.noted("the header repeats at line 13")) << log.notes();
  EXPECT_TRUE(log.noted("columns not understood, left out: foo.bar")) << log.notes();
  EXPECT_TRUE(log.noted("gpuscope has no column for, left out: fan.speed")) << log.notes();
  EXPECT_TRUE(log.noted("power.draw has no value (N/A in 1 row)")) << log.notes();
  EXPECT_TRUE(log.noted("temperature.gpu has no value (Unknown Error in 1 row)")) << log.notes();
  // Times: 10:00:00 + 10 s for the second part, GPU 1 5 ms after GPU 0, read as UTC.
  const std::int64_t ten_am = 1795600800LL * 1'000'000'000;  // 2026-11-25 10:00:00 UTC
  EXPECT_EQ(log.gpu(1)[5].wall_ns, ten_am + 10'005'000'000);
}

TEST(SmiCsv, OneRunPerHostAndGpusByUuid) {
  auto log = import_log({kLogs / "smi-csv-two-hosts.csv"});
  ASSERT_EQ(log.runs.size(), 2U);
  std::set<std::string> hosts;
  for (std::size_t r = 0; r < 2; ++r) {
    hosts.insert(log.runs[r].info.host);
    const auto& devices = log.devices[log.runs[r].run_id];
    ASSERT_EQ(devices.size(), 2U);
    EXPECT_EQ(devices[0].memory_total_bytes, std::uint64_t{81920} * 1024 * 1024);
    EXPECT_EQ(devices[1].name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(log.gpu(1, r).size(), 3U);
    EXPECT_DOUBLE_EQ(log.gpu(1, r)[0].get(Metric::PowerW).value(), 300.0);
  }
  EXPECT_EQ(hosts, (std::set<std::string>{"nid001", "nid002"}));
}

TEST(SmiCsv, TheRealH200LogWithUnitsAndWithout) {
  auto log = import_log({kH200 / "smi.csv"});
  ASSERT_EQ(log.runs.size(), 1U);
  const auto& rows = log.gpu(0);
  ASSERT_EQ(rows.size(), 64U);
  // The first line: 2026/11/25 22:40:11.719, ... 81.86 W, 81.86 W, 81.71 W, 700.00 W, ...
  EXPECT_EQ(rows[0].wall_ns, 1795646411719000000);
  EXPECT_DOUBLE_EQ(rows[0].get(Metric::PowerW).value(), 81.86);
  EXPECT_DOUBLE_EQ(rows[0].get(Metric::PowerInstantW).value(), 81.71);
  EXPECT_DOUBLE_EQ(rows[0].get(Metric::PowerLimitW).value(), 700.0);
  EXPECT_DOUBLE_EQ(rows[0].get(Metric::MemoryFreeBytes).value(), 143156 * kMiB);
  EXPECT_DOUBLE_EQ(rows[0].get(Metric::ClockEventReasons).value(), 1.0);
  const auto& d = log.devices.begin()->second.at(0);
  EXPECT_EQ(d.name, "NVIDIA H200");
  EXPECT_EQ(d.pci_bus_id, "00000000:00:06.0");
  EXPECT_EQ(d.memory_total_bytes, std::uint64_t{143771} * 1024 * 1024);
  EXPECT_EQ(log.runs[0].info.driver_version, "580.159.04");

  // The same fields written with noheader,nounits: the fields come from --query-gpu.
  const std::string no_fields = error_of({kH200 / "smi-nounits.csv"});
  EXPECT_NE(no_fields.find("is no input gpuscope reads"), std::string::npos) << no_fields;
  ReadOptions options;
  options.format = "nvidia-smi-csv";
  const std::string forced = error_of({kH200 / "smi-nounits.csv"}, options);
  EXPECT_NE(forced.find("smi-nounits.csv:1: the first line is no nvidia-smi CSV header"),
            std::string::npos)
      << forced;
  options.format.clear();
  options.query_gpu =
      "timestamp,index,name,uuid,pci.bus_id,driver_version,pstate,temperature.gpu,"
      "temperature.memory,utilization.gpu,utilization.memory,memory.total,memory.used,"
      "memory.free,power.draw,power.draw.average,power.draw.instant,power.limit,"
      "enforced.power.limit,clocks.current.sm,clocks.current.memory,clocks.current.graphics,"
      "clocks_event_reasons.active,fan.speed,ecc.errors.corrected.volatile.total,"
      "pcie.link.gen.current,pcie.link.width.current,mig.mode.current";
  auto bare = import_log({kH200 / "smi-nounits.csv"}, options);
  ASSERT_EQ(bare.gpu(0).size(), 32U);
  EXPECT_DOUBLE_EQ(bare.gpu(0)[0].get(Metric::PowerW).value(), 81.86);
  EXPECT_DOUBLE_EQ(bare.gpu(0)[0].get(Metric::MemoryUsedBytes).value(), 0.0);
  EXPECT_DOUBLE_EQ(bare.gpu(0)[0].get(Metric::SmClockMhz).value(), 345.0);
}

TEST(SmiCsv, TheZoneOfLocalTimesIsTheOneGiven) {
  ReadOptions options;
  options.timezone = "+01:00";
  auto log = import_log({kH200 / "smi.csv"}, options);
  EXPECT_EQ(log.gpu(0)[0].wall_ns, 1795646411719000000 - 3'600'000'000'000);
  EXPECT_TRUE(log.noted("local times read in +01:00 (--timezone)")) << log.notes();
  options.timezone = "Mars/Olympus_Mons";
  const std::string e = error_of({kH200 / "smi.csv"}, options);
  EXPECT_NE(e.find("--timezone Mars/Olympus_Mons: no such zone"), std::string::npos) << e;
}

TEST(SmiCsv, TheHourDaylightSavingRepeatsIsReadInOrder) {
  if (!fs::exists("/usr/share/zoneinfo/Europe/Zurich")) {
    GTEST_SKIP() << "no tzdata on this machine (Europe/Zurich)";
  }
  testing::TempDir tmp;
  // Zurich left summer time at 03:00 CEST on 2026-10-25: 02:00-02:59 comes twice.
  std::string text = "timestamp, power.draw [W]\n";
  for (int minutes = 0; minutes <= 150; minutes += 10) {
    const int clock = 90 + minutes - (minutes >= 90 ? 60 : 0);  // from 01:30, back at 03:00
    text += fmt::format("2026/10/25 {:02d}:{:02d}:00.000, 100.00 W\n", clock / 60, clock % 60);
  }
  const fs::path file = fs::path(tmp.path()) / "dst.csv";
  std::ofstream(file) << text;
  ReadOptions options;
  options.timezone = "Europe/Zurich";
  auto log = import_log({file}, options);
  const auto& rows = log.gpu(0);
  ASSERT_EQ(rows.size(), 16U);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].wall_ns - rows[i - 1].wall_ns, 600'000'000'000) << "row " << i;
  }
  EXPECT_EQ(rows[0].wall_ns, 1792884600LL * 1'000'000'000);  // 01:30 CEST = 23:30 UTC
}

TEST(SmiCsv, MalformedLinesAreNamedByFileAndLine) {
  testing::TempDir tmp;
  const auto short_line = edited(tmp, kH200 / "smi.csv", "short.csv", [](std::string& t) {
    const auto at = t.find('\n', t.find('\n', t.find('\n') + 1) + 1);  // end of line 3
    t.insert(at + 1, "2026/11/25 22:40:12.900, 0, NVIDIA H200\n");
  });
  std::string e = error_of({short_line});
  EXPECT_NE(e.find("short.csv:4: 3 fields where the header has 28"), std::string::npos) << e;
  const auto bad_value = edited(tmp, kH200 / "smi.csv", "value.csv", [](std::string& t) {
    const auto at = t.find("81.85 W");
    t.replace(at, 7, "lots W");
  });
  e = error_of({bad_value});
  EXPECT_NE(e.find("value.csv:4: 'lots W' is no value of power.draw [W]"), std::string::npos) << e;
  const auto bad_time = edited(tmp, kH200 / "smi.csv", "time.csv", [](std::string& t) {
    const auto at = t.find("2026/11/25 22:40:12.263");
    t.replace(at, 10, "2026/13/25");
  });
  e = error_of({bad_time});
  EXPECT_NE(e.find("time.csv:3: '2026/13/25 22:40:12.263' is no date"), std::string::npos) << e;
}

TEST(SmiCsv, WhatIsNoLogIsNotReadAsOne) {
  testing::TempDir tmp;
  const fs::path text = fs::path(tmp.path()) / "notes.csv";
  std::ofstream(text) << "name, age\nada, 36\n";
  EXPECT_NE(error_of({text}).find("is no input gpuscope reads"), std::string::npos);
  const fs::path binary = fs::path(tmp.path()) / "data.csv";
  std::ofstream(binary, std::ios::binary) << std::string("timestamp, power.draw [W]\n\0\0", 29);
  EXPECT_NE(error_of({binary}).find("is no input gpuscope reads"), std::string::npos);
  const fs::path empty = fs::path(tmp.path()) / "empty.csv";
  std::ofstream(empty) << "timestamp, power.draw [W]\n";
  EXPECT_NE(error_of({empty}).find("holds no run with samples"), std::string::npos)
      << error_of({empty});
}

// A NUL byte in a value: the message was cut at it (a C string), hiding the rest; now shown as
// \x00. A NUL within the first 4 KiB: the log is no text a format recognises, and analyze's
// inputs passed it on as a run database ("not a SQLite database"); now said as what it is.
TEST(SmiCsv, ANulByteIsShownAndSaidNotASqliteComplaint) {
  testing::TempDir tmp;
  const auto late = edited(tmp, kH200 / "smi.csv", "late.csv", [](std::string& t) {
    const auto at = t.rfind(", ", t.find(" W, ", 8000)) + 2;  // a power value past 8 KB
    t.replace(at, t.find(" W, ", at) - at, std::string("81\0.85 tail", 11));
  });
  const std::string e = error_of({late});
  EXPECT_NE(e.find("'81\\x00.85 tail W' is no value of power.draw [W]"), std::string::npos) << e;
  const auto early = edited(tmp, kH200 / "smi.csv", "early.csv", [](std::string& t) {
    const auto line3 = t.find('\n', t.find('\n') + 1) + 1;
    t.insert(line3 + 5, std::string(1, '\0'));
  });
  try {
    RunInputs inputs({early.string()}, {});
    ADD_FAILURE() << "taken as a run database";
  } catch (const Error& e2) {
    const std::string what = e2.what();
    EXPECT_NE(what.find("early.csv is no input gpuscope reads"), std::string::npos) << what;
    EXPECT_NE(what.find("holds a NUL byte at line 3"), std::string::npos) << what;
  }
}

TEST(LogTicks, TheShapeOfTicksOrWhyItIsUnclear) {
  std::string why;
  const auto rows_at = [](const std::vector<std::int64_t>& times) {
    std::vector<TickRow> rows;
    for (auto t : times) rows.push_back({t, rows.size() + 2, {}, {}, {}});
    return rows;
  };
  // 3 GPUs, rows 2 ms apart, ticks every 100 ms.
  std::vector<std::int64_t> t;
  for (int tick = 0; tick < 10; ++tick) {
    for (int g = 0; g < 3; ++g) t.push_back(tick * 100'000'000LL + g * 2'000'000LL);
  }
  auto shape = tick_shape(rows_at(t), std::nullopt, why);
  ASSERT_TRUE(shape) << why;
  EXPECT_EQ(shape->gpus, 3U);
  EXPECT_EQ(shape->interval_ns, 100'000'000);
  EXPECT_TRUE(shape->timed);
  // One row per tick: evenly spaced.
  std::vector<std::int64_t> one = {0, 100, 200, 300, 400};
  for (auto& v : one) v *= 1'000'000;
  shape = tick_shape(rows_at(one), std::nullopt, why);
  ASSERT_TRUE(shape) << why;
  EXPECT_EQ(shape->gpus, 1U);
  // Ticks of 3 and 2 rows: not one GPU count.
  std::vector<std::int64_t> mixed;
  for (int tick = 0; tick < 12; ++tick) {
    for (int g = 0; g < (tick % 2 == 0 ? 3 : 2); ++g) {
      mixed.push_back(tick * 100'000'000LL + g * 2'000'000LL);
    }
  }
  EXPECT_FALSE(tick_shape(rows_at(mixed), std::nullopt, why));
  EXPECT_NE(why.find("no count of rows per tick"), std::string::npos) << why;
}

TEST(LocalZone, OffsetsNamesAndBadZones) {
  LocalZone utc("UTC");
  EXPECT_EQ(utc.to_utc_ns({1970, 1, 2, 0, 0, 0}), 86'400'000'000'000);
  LocalZone india("+05:30");
  EXPECT_EQ(india.to_utc_ns({1970, 1, 1, 5, 30, 1'500'000'000}), 1'500'000'000);
  EXPECT_FALSE(utc.to_utc_ns({2026, 2, 30, 0, 0, 0})) << "February 30 is no date";
  EXPECT_FALSE(utc.to_utc_ns({1014, 5, 3, 0, 0, 0})) << "before 1970: outside 64-bit ns (fuzz)";
  EXPECT_THROW(LocalZone("+25:00"), Error);
  EXPECT_THROW(LocalZone("../../etc/passwd"), Error);
}

}  // namespace
}  // namespace gpuscope::ingest

namespace gpuscope::ingest {
namespace {

// A field a random log may carry: its header name and unit, the metric, and how nvidia-smi
// prints a value of it.
struct RandomField {
  const char* name;
  const char* unit;
  Metric metric;
  double scale;  // gpuscope's unit per printed unit
  int decimals;
};
constexpr RandomField kRandomFields[] = {
    {"power.draw", "W", Metric::PowerW, 1, 2},
    {"power.draw.instant", "W", Metric::PowerInstantW, 1, 2},
    {"utilization.gpu", "%", Metric::GpuUtilPct, 1, 0},
    {"utilization.memory", "%", Metric::MemUtilPct, 1, 0},
    {"memory.used", "MiB", Metric::MemoryUsedBytes, 1024.0 * 1024.0, 0},
    {"temperature.gpu", "", Metric::TemperatureC, 1, 0},
    {"clocks.sm", "MHz", Metric::SmClockMhz, 1, 0},
};

// Property: any subset and order of fields, with or without units, GPUs named by index, by
// uuid or by nothing, read back exactly as written.
TEST(SmiCsvProperty, AnyFieldsInAnyOrderReadBackAsWritten) {
  for (unsigned seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    const auto gpus = static_cast<unsigned>(1 + rng() % 6);
    const int identity = static_cast<int>(rng() % 3);  // 0 index, 1 uuid, 2 none
    const bool units = rng() % 2 == 0;
    std::vector<RandomField> fields;
    for (const auto& f : kRandomFields) {
      if (rng() % 2 == 0) fields.push_back(f);
    }
    if (fields.empty()) fields.push_back(kRandomFields[0]);
    std::shuffle(fields.begin(), fields.end(), rng);
    std::vector<std::string> columns = {"timestamp"};
    if (identity == 0) columns.insert(columns.begin() + static_cast<long>(rng() % 2), "index");
    if (identity == 1) columns.push_back("uuid");
    std::string header;
    for (const auto& c : columns) header += (header.empty() ? "" : ", ") + c;
    for (const auto& f : fields) {
      header += fmt::format(", {}{}", f.name,
                            units && *f.unit != '\0' ? fmt::format(" [{}]", f.unit) : "");
    }
    testing::TempDir tmp;
    const fs::path file = fs::path(tmp.path()) / "random.csv";
    std::ofstream out(file);
    out << header << "\n";
    const int ticks = 6 + static_cast<int>(rng() % 20);
    const int interval_ms = 100 + static_cast<int>(rng() % 900);
    std::map<unsigned, std::vector<std::vector<double>>> written;  // GPU -> rows -> field values
    for (int t = 0; t < ticks; ++t) {
      int offset_ms = 0;  // the rows of a tick 1-3 ms apart, in GPU order
      for (unsigned g = 0; g < gpus; ++g) {
        offset_ms += g == 0 ? 0 : 1 + static_cast<int>(rng() % 3);
        const int ms = t * interval_ms + offset_ms;
        std::string line = fmt::format("2026/11/25 10:{:02d}:{:02d}.{:03d}", ms / 60000,
                                       ms / 1000 % 60, ms % 1000);
        if (identity == 0) {
          line = columns[0] == "index" ? fmt::format("{}, {}", g, line)
                                       : fmt::format("{}, {}", line, g);
        }
        if (identity == 1) line += fmt::format(", GPU-{:08x}-0000-0000-0000-000000000000", g);
        std::vector<double> values;
        for (const auto& f : fields) {
          const double scale = std::pow(10.0, f.decimals);
          // Up to 700 in the printed unit, within what the metric can be (100 %, 200 °C).
          const double high = std::min(700.0, std::floor(physical_range(f.metric).high / f.scale));
          const double v =
              std::round(std::uniform_real_distribution<>(0, high)(rng) * scale) / scale;
          values.push_back(v * f.scale);
          line += fmt::format(", {:.{}f}{}", v, f.decimals,
                              units && *f.unit != '\0' ? fmt::format(" {}", f.unit) : "");
        }
        written[g].push_back(values);
        out << line << "\n";
      }
    }
    out.close();
    auto log = import_log({file});
    ASSERT_EQ(log.devices.begin()->second.size(), gpus) << "seed " << seed << "\n" << header;
    for (unsigned g = 0; g < gpus; ++g) {
      const auto& rows = log.gpu(g);
      ASSERT_EQ(rows.size(), written[g].size()) << "seed " << seed << " GPU " << g;
      for (std::size_t r = 0; r < rows.size(); ++r) {
        for (std::size_t f = 0; f < fields.size(); ++f) {
          ASSERT_DOUBLE_EQ(rows[r].get(fields[f].metric).value(), written[g][r][f])
              << "seed " << seed << " GPU " << g << " row " << r << " " << fields[f].name;
        }
      }
    }
  }
}

}  // namespace
}  // namespace gpuscope::ingest

namespace gpuscope::ingest {
namespace {

// Logs of a real job on an H200 as the loggers left them (tests/fixtures/h200-580/README.md).
TEST(SmiCsvRealJob, LoggersKilledWithTheJobLoseOnlyTheirCutLine) {
  auto killed = import_log({kH200 / "job-smi-100ms-killed.csv"});
  EXPECT_EQ(killed.gpu(0).size(), 458U);
  EXPECT_TRUE(killed.noted("job-smi-100ms-killed.csv:460: the last line was cut off mid-write"))
      << killed.notes();
  EXPECT_TRUE(killed.noted("gpuscope has no column for, left out: fan.speed, pstate"))
      << killed.notes();
  // -lms 100 ticks every ~102 ms on this GPU: the queries take their time.
  EXPECT_NEAR(static_cast<double>(killed.runs[0].info.sampling_interval_ns), 102e6, 3e6);
  // The mask is logged, so the individual reason beside it is not needed.
  EXPECT_DOUBLE_EQ(killed.gpu(0)[0].get(Metric::ClockEventReasons).value(), 1.0);

  ReadOptions options;
  options.query_gpu = "timestamp,index,power.draw,utilization.gpu,memory.used";
  auto bare = import_log({kH200 / "job-smi-200ms-noheader-killed.csv"}, options);
  EXPECT_EQ(bare.gpu(0).size(), 184U);
  EXPECT_TRUE(bare.noted(":185: the last line was cut off mid-write")) << bare.notes();

  auto one = import_log({kH200 / "job-smi-1s-noindex.csv"});
  ASSERT_EQ(one.devices.begin()->second.size(), 1U) << "one GPU, no GPU column";
  EXPECT_EQ(one.gpu(0).size(), 49U);
  EXPECT_NEAR(static_cast<double>(one.runs[0].info.sampling_interval_ns), 1e9, 0.05e9);
}

TEST(SmiDmonRealJob, TheHeaderDmonReprintsEvery44RowsIsSkipped) {
  auto log = import_log({kH200 / "job-dmon-dt.txt"});
  ASSERT_EQ(log.runs.size(), 1U);
  EXPECT_EQ(log.gpu(0).size(), 49U);
  EXPECT_TRUE(log.noted("the header repeats at line 47")) << log.notes();
  for (const auto& row : log.gpu(0)) EXPECT_TRUE(row.get(Metric::PowerW)) << "every row has pwr";
}

}  // namespace
}  // namespace gpuscope::ingest

namespace gpuscope::ingest {
namespace {

TEST(SmiCsv, TimesGoingBackAreSaidNotHidden) {
  testing::TempDir tmp;
  std::string text = "timestamp, index, power.draw [W]\n";
  for (int k = 0; k < 40; ++k) {
    const int second = k - (k >= 20 ? 10 : 0);  // the clock set back 10 s after 20 samples
    text += fmt::format("2026/11/25 10:00:{:02d}.000, 0, {}.00 W\n", second, 100 + k);
  }
  const fs::path file = fs::path(tmp.path()) / "back.csv";
  std::ofstream(file) << text;
  auto log = import_log({file});
  EXPECT_EQ(log.gpu(0).size(), 40U) << "nothing dropped";
  EXPECT_TRUE(
      log.noted("back.csv: times go back 1 time, by up to 9 s (first at 2026-11-25 "
                "10:00:10 UTC)"))
      << log.notes();
  EXPECT_EQ(log.runs[0].end.problems.size(), 3U) << "and said on the run";
}

}  // namespace
}  // namespace gpuscope::ingest
