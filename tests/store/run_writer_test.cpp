// RunWriter end to end: what goes in comes out of a real SQLite file.
#include "store/run_writer.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "core/error.hpp"
#include "store/run_reader.hpp"
#include "store/sqlite.hpp"
#include "store_test_data.hpp"
#include "support/process.hpp"

namespace gpuscope::store {
namespace {

using gpuscope::testing::TempDir;
using namespace store::testing;

RunEnd make_end() {
  RunEnd end;
  end.status = RunStatus::Signaled;
  end.end_wall_ns = 1'714'566'999'000'000'001;
  end.end_mono_ns = 9'000'000'000;
  end.exit_code = 137;
  end.term_signal = 9;
  end.samples_taken = 20;
  end.deadlines_missed = 2;
  end.problems = {"GPU 1 does not support GPM; saturation metrics will be empty for it"};
  return end;
}

TEST(RunWriter, RoundTripsRunDevicesAndSamples) {
  TempDir dir;
  const auto path = dir.file("run.db");
  const RunInfo run = make_run(2);
  auto writer = RunWriter::create(path, false, run, make_devices(2));
  for (std::int64_t seq = 0; seq < 10; ++seq) {
    for (unsigned d = 0; d < 2; ++d) writer->push(make_sample(d, seq));
  }
  EXPECT_TRUE(writer->finish(make_end()).empty());

  auto reader = RunReader::open(path);
  EXPECT_EQ(reader.schema_version(), 1);
  const auto runs = reader.runs();
  ASSERT_EQ(runs.size(), 1U);
  const auto& stored = runs[0];
  EXPECT_EQ(stored.info.command, run.command);
  EXPECT_EQ(stored.info.label, "baseline");
  EXPECT_EQ(stored.info.host, "node1");
  EXPECT_EQ(stored.info.start_wall_ns, run.start_wall_ns);
  EXPECT_EQ(stored.info.start_mono_ns, run.start_mono_ns);
  EXPECT_EQ(stored.info.sampling_interval_ns, 500'000'000);
  EXPECT_EQ(stored.info.power_sampling_interval_ns, 50'000'000);
  EXPECT_EQ(stored.info.scenario, run.scenario);
  EXPECT_EQ(stored.info.slurm.job_id, "4242");
  EXPECT_EQ(stored.info.slurm.rank, 2);
  EXPECT_EQ(stored.info.slurm.ntasks, 3);
  EXPECT_EQ(stored.end.status, RunStatus::Signaled);
  EXPECT_EQ(stored.end.exit_code, 137);
  EXPECT_EQ(stored.end.term_signal, 9);
  EXPECT_EQ(stored.end.end_wall_ns, 1'714'566'999'000'000'001);
  EXPECT_EQ(stored.end.samples_taken, 20);
  EXPECT_EQ(stored.end.deadlines_missed, 2);
  EXPECT_EQ(stored.end.problems, make_end().problems);

  const auto devices = reader.devices(stored.run_id);
  ASSERT_EQ(devices.size(), 2U);
  EXPECT_EQ(devices[1].uuid, "GPU-00000001");
  EXPECT_EQ(devices[1].memory_total_bytes, 85'520'809'984ULL);
  EXPECT_EQ(devices[1].max_sm_clock_mhz, 1980U);
  EXPECT_FALSE(devices[1].max_graphics_clock_mhz.has_value());
  ASSERT_EQ(devices[1].capabilities.size(), 2U);
  EXPECT_FALSE(devices[1].capabilities[1].supported);
  EXPECT_EQ(devices[1].capabilities[1].detail, "Not Supported");

  std::int64_t n = 0;
  auto cursor = reader.samples();
  RunSample sample;
  while (cursor.next(sample)) {
    const unsigned device = static_cast<unsigned>(n / 10);  // ordered by device, then time
    const SampleRow expected = make_sample(device, n % 10);
    EXPECT_EQ(sample.run_id, stored.run_id);
    EXPECT_EQ(sample.row.device_index, device);
    EXPECT_EQ(sample.row.mono_ns, expected.mono_ns);
    EXPECT_EQ(sample.row.wall_ns, expected.wall_ns);
    EXPECT_EQ(sample.row.present, expected.present);
    EXPECT_FALSE(sample.row.get(Metric::MemoryTemperatureC).has_value()) << "NULL, not 0";
    EXPECT_EQ(sample.row.get(Metric::PowerW), 0.0) << "a measured 0 stays 0";
    EXPECT_EQ(sample.row.get(Metric::EnergyMj), expected.get(Metric::EnergyMj)) << "exact";
    EXPECT_EQ(sample.row.get(Metric::MemoryUsedBytes), 85'000'000'001.0);
    EXPECT_EQ(sample.row.get(Metric::SmOccupancyPct), expected.get(Metric::SmOccupancyPct));
    ++n;
  }
  EXPECT_EQ(n, 20);
  EXPECT_EQ(reader.count_samples({stored.run_id, 1U}), 10);
}

TEST(RunWriter, StoresPowerSamplesEventsAndOutput) {
  TempDir dir;
  const auto path = dir.file("run.db");
  auto writer = RunWriter::create(path, false, make_run(), make_devices(1));
  writer->push(PowerRow{0, 10, 20, 312.5, std::nullopt, 987'654'321'012.0});
  writer->push(Event{30, 40, 0U, EventKind::ClockEvents, "power cap"});
  writer->push(Event{50, 60, std::nullopt, EventKind::JobExit, "exit code 0"});
  writer->push(OutputLine{70, 80, OutputStream::Stderr, "warning: \xce\xbb 'quoted'"});
  writer->push(OutputLine{90, 100, OutputStream::Stdout, ""});
  writer->finish(RunEnd{});

  auto reader = RunReader::open(path);
  auto power = reader.power_samples();
  RunPowerSample p;
  ASSERT_TRUE(power.next(p));
  EXPECT_EQ(p.row.power_w, 312.5);
  EXPECT_FALSE(p.row.power_instant_w.has_value());
  EXPECT_EQ(p.row.energy_mj, 987'654'321'012.0);
  EXPECT_FALSE(power.next(p));

  auto events = reader.events();
  RunEvent e;
  ASSERT_TRUE(events.next(e));
  EXPECT_EQ(e.event.kind.text(), "clock_events");
  EXPECT_EQ(e.event.device_index, 0U);
  ASSERT_TRUE(events.next(e));
  EXPECT_EQ(e.event.kind.text(), "job_exit");
  EXPECT_FALSE(e.event.device_index.has_value());
  EXPECT_EQ(e.event.mono_ns, 60);
  EXPECT_FALSE(events.next(e));

  auto output = reader.output();
  RunOutputLine line;
  ASSERT_TRUE(output.next(line));
  EXPECT_EQ(line.line.stream, OutputStream::Stderr);
  EXPECT_EQ(line.line.text, "warning: \xce\xbb 'quoted'");
  ASSERT_TRUE(output.next(line));
  EXPECT_EQ(line.line.stream, OutputStream::Stdout);
  EXPECT_EQ(line.line.text, "");
  EXPECT_FALSE(output.next(line));
}

TEST(RunWriter, DescribesTheMetricCatalog) {
  TempDir dir;
  RunWriter::create(dir.file("run.db"), false, make_run(), {})->finish(RunEnd{});
  const auto metrics = RunReader::open(dir.file("run.db")).metrics();
  ASSERT_EQ(metrics.size(), kStoredMetricCount)
      << "derived metrics (flop_active_pct) are not stored";
  EXPECT_EQ(metrics.back().name, "amd_throttle_status");
  EXPECT_EQ(metrics[4].name, "energy_mj");
  EXPECT_EQ(metrics[4].unit, "mJ");
  EXPECT_EQ(metrics[4].kind, "counter");
  EXPECT_EQ(metrics[4].storage, "INTEGER");
}

TEST(RunWriter, WithoutFinishTheRunStaysRunning) {
  TempDir dir;
  {
    auto writer = RunWriter::create(dir.file("run.db"), false, make_run(), make_devices(1));
    writer->push(make_sample(0, 0));
  }  // destroyed as when gpuscope is interrupted
  auto reader = RunReader::open(dir.file("run.db"));
  EXPECT_EQ(reader.runs().at(0).end.status, RunStatus::Running);
  EXPECT_EQ(reader.count_samples(), 1) << "rows pushed before destruction are flushed";
}

TEST(RunWriter, RefusesToOverwriteUnlessAsked) {
  TempDir dir;
  const auto path = dir.file("run.db");
  { std::ofstream(path) << "precious"; }
  try {
    RunWriter::create(path, false, make_run(), {});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_EQ(std::string(e.what()), path + " exists; use -f/--force-overwrite to replace it");
  }
  std::ifstream in(path);
  std::string text;
  in >> text;
  EXPECT_EQ(text, "precious") << "the refused file is untouched";

  auto writer = RunWriter::create(path, true, make_run(), {});
  writer->finish(RunEnd{});
  EXPECT_EQ(RunReader::open(path).runs().size(), 1U);
}

TEST(RunWriter, CreatesParentDirectories) {
  TempDir dir;
  const auto path = dir.file("a/b/run.db");
  RunWriter::create(path, false, make_run(), {})->finish(RunEnd{});
  EXPECT_EQ(RunReader::open(path).runs().size(), 1U);
}

TEST(RunWriter, SaysWhichDirectoryCannotBeCreated) {
  TempDir dir;
  { std::ofstream(dir.file("plain")) << "x"; }
  try {
    RunWriter::create(dir.file("plain/run.db"), false, make_run(), {});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.summary(), "cannot create directory " + dir.file("plain"));
    EXPECT_FALSE(e.reason().empty());
  }
}

TEST(RunWriter, SaysWhichDirectoryIsNotWritable) {
  if (geteuid() == 0) GTEST_SKIP() << "root may write into a read-only directory";
  TempDir dir;
  const auto locked = dir.file("locked");
  ASSERT_EQ(mkdir(locked.c_str(), 0555), 0);
  try {
    RunWriter::create(locked + "/run.db", false, make_run(), {});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.summary(), "cannot write to directory " + locked);
    EXPECT_EQ(e.reason(), "Permission denied");
  }
  chmod(locked.c_str(), 0755);
}

TEST(RunWriter, PushAfterFinishIsCountedAsDropped) {
  TempDir dir;
  auto writer = RunWriter::create(dir.file("run.db"), false, make_run(), make_devices(1));
  EXPECT_TRUE(writer->finish(RunEnd{}).empty());
  writer->push(make_sample(0, 0));
  EXPECT_EQ(writer->stats().dropped.samples, 1);
}

// Metrics absent in some rows and present in others, in every slot of the multi-row INSERT and
// of the single-row one: each absent value is NULL, each present one its value, whatever the
// rows before bound. An import's writer (scratch file, flush_behind) writes them all.
TEST(RunWriter, AbsentMetricsStayNullWhateverTheRowsBefore) {
  TempDir dir;
  const auto path = dir.file("run.db");
  WriterOptions options;
  options.scratch = true;
  auto writer = RunWriter::create(path, false, make_run(), make_devices(2), options);
  const auto present = [](std::int64_t seq, std::size_t metric) {
    return (seq + static_cast<std::int64_t>(metric)) %
               (2 + static_cast<std::int64_t>(metric % 3)) !=
           0;
  };
  constexpr std::int64_t kTicks = 157;  // not a multiple of the rows per INSERT
  for (std::int64_t seq = 0; seq < kTicks; ++seq) {
    for (unsigned d = 0; d < 2; ++d) {
      SampleRow row = make_sample(d, seq);
      row.present.reset();
      for (std::size_t m = 0; m < kStoredMetricCount; ++m) {
        if (present(seq, m))
          row.set(static_cast<Metric>(m), static_cast<double>(seq * 100) + static_cast<double>(m));
      }
      writer->push(row);
    }
    if (seq % 20 == 0) writer->flush_behind();
  }
  writer->finish(RunEnd{});

  Database db(path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM samples"), 2 * kTicks);
  for (std::size_t m = 0; m < kStoredMetricCount; ++m) {
    Statement rows = db.prepare("SELECT mono_ns, " + std::string(kMetrics[m].name) +
                                " FROM samples ORDER BY rowid");
    std::int64_t row_number = 0;
    while (rows.step()) {
      const std::int64_t seq = row_number++ / 2;
      ASSERT_EQ(rows.int64(0), make_sample(0, seq).mono_ns);
      if (present(seq, m)) {
        ASSERT_FALSE(rows.is_null(1)) << kMetrics[m].name << " row " << row_number;
        EXPECT_EQ(rows.real(1), static_cast<double>(seq * 100 + static_cast<std::int64_t>(m)));
      } else {
        ASSERT_TRUE(rows.is_null(1)) << kMetrics[m].name << " row " << row_number;
      }
    }
  }
  // A scratch file ends as complete as any: no journal or log beside it.
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  EXPECT_FALSE(std::filesystem::exists(path + "-journal"));
}

}  // namespace
}  // namespace gpuscope::store
