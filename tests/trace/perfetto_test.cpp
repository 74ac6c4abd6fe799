// `gpuscope export --perfetto` through the real binary: a simulated run with the fast power
// cadence, events and an imported kernel trace, exported and parsed with nlohmann-json, checked
// against the trace-event format (fields each phase requires, per-track time order, metadata
// for every process and thread) and against the database itself (every counter value is a
// sample, every kernel slice a kernel record); a merged database; the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "store/sqlite.hpp"
#include "support/process.hpp"
#include "support/sql.hpp"
#include "trace/sidecar_fixture.hpp"

namespace gpuscope::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// ts in µs (three decimals) of a wall-clock time, as the exporter writes it.
double ts_of(std::int64_t wall_ns, std::int64_t t0) {
  return static_cast<double>(wall_ns - t0) / 1000.0;
}

class PerfettoExport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    db_ = dir_->file("run.db");
    ProcessResult r = run_gpuscope({"profile", "--simulate", "h100x4-straggler", "-q", "-s", "50",
                                    "--power-sampling-ms", "25", "-o", db_, "--", "sleep", "0.5"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    write_sidecar(db_ + ".trace", uuid_of(1), 7);
    r = run_gpuscope({"kernels", "--import", db_});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_gpuscope({"export", "--perfetto", dir_->file("trace.json"), db_});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("ui.perfetto.dev"), std::string::npos) << r.err;
    trace_ = new json(json::parse(read_file(dir_->file("trace.json"))));
  }
  static void TearDownTestSuite() {
    delete trace_;
    delete dir_;
  }
  static const json& events() { return (*trace_)["traceEvents"]; }
  static std::int64_t t0() { return (*trace_)["otherData"]["t0_unix_ns"].get<std::int64_t>(); }

  static TempDir* dir_;
  static std::string db_;
  static json* trace_;
};
TempDir* PerfettoExport::dir_ = nullptr;
std::string PerfettoExport::db_;
json* PerfettoExport::trace_ = nullptr;

TEST_F(PerfettoExport, JsonObjectFormat) {
  ASSERT_TRUE(trace_->is_object());
  ASSERT_TRUE(events().is_array());
  EXPECT_EQ((*trace_)["displayTimeUnit"], "ms");
  EXPECT_EQ(t0(), number(db_, "SELECT start_wall_ns FROM runs"));
  std::set<std::string> phases;
  for (const json& e : events()) {
    ASSERT_TRUE(e.contains("name") && e["name"].is_string()) << e;
    ASSERT_TRUE(e.contains("ph") && e["ph"].is_string()) << e;
    ASSERT_TRUE(e.contains("pid") && e["pid"].is_number_integer()) << e;
    ASSERT_TRUE(e.contains("tid") && e["tid"].is_number_integer()) << e;
    const std::string ph = e["ph"];
    phases.insert(ph);
    if (ph == "M") {
      EXPECT_TRUE(e["args"].is_object()) << e;
      const std::string name = e["name"];
      EXPECT_TRUE(name == "process_name" || name == "process_sort_index" || name == "thread_name" ||
                  name == "thread_sort_index")
          << e;
      continue;
    }
    ASSERT_TRUE(e.contains("ts") && e["ts"].is_number()) << e;
    if (ph == "X") {
      ASSERT_TRUE(e.contains("dur") && e["dur"].is_number()) << e;
      EXPECT_GE(e["dur"].get<double>(), 0) << e;
    } else if (ph == "C") {
      ASSERT_TRUE(e["args"].is_object() && e["args"].size() == 1) << e;
      EXPECT_TRUE(e["args"].begin()->is_number()) << e;
    } else if (ph == "i") {
      EXPECT_TRUE(e["s"] == "g" || e["s"] == "p" || e["s"] == "t") << e;
    } else {
      ADD_FAILURE() << "unexpected phase " << ph;
    }
  }
  EXPECT_EQ(phases, (std::set<std::string>{"M", "C", "X", "i"}));
}

TEST_F(PerfettoExport, EveryTrackIsInTimeOrderAndNamed) {
  std::map<std::pair<int, std::string>, double> last_counter;
  std::map<std::pair<int, int>, double> last_slice_end;
  std::set<int> named_processes;
  std::set<std::pair<int, int>> named_threads;
  std::set<std::pair<int, int>> used_threads;
  for (const json& e : events()) {
    const int pid = e["pid"];
    const int tid = e["tid"];
    const std::string ph = e["ph"];
    if (ph == "M") {
      if (e["name"] == "process_name") named_processes.insert(pid);
      if (e["name"] == "thread_name") named_threads.insert({pid, tid});
    } else if (ph == "C") {
      const auto key = std::make_pair(pid, e["name"].get<std::string>());
      const double ts = e["ts"];
      if (last_counter.contains(key)) {
        EXPECT_GE(ts, last_counter[key]) << e;
      }
      last_counter[key] = ts;
    } else if (ph == "X") {
      // Slices of one thread must not overlap (they would have to nest).
      const auto key = std::make_pair(pid, tid);
      const double ts = e["ts"];
      if (last_slice_end.contains(key)) {
        EXPECT_GE(ts, last_slice_end[key]) << e;
      }
      last_slice_end[key] = ts + e["dur"].get<double>();
      used_threads.insert(key);
    }
    if (ph != "M") {
      EXPECT_TRUE(named_processes.contains(pid)) << "no process_name before " << e;
    }
  }
  for (const auto& t : used_threads) EXPECT_TRUE(named_threads.contains(t));
  // Streams 7 and 9, and memcpy/memset of stream 7.
  EXPECT_EQ(used_threads.size(), 3u);
}

TEST_F(PerfettoExport, CountersAreTheSamples) {
  // GPU 2's power and SM activity, value for value.
  for (const auto& [metric, unit] : {std::pair{"power_w", "W"}, std::pair{"sm_active_pct", "%"}}) {
    std::vector<std::pair<double, double>> exported;
    for (const json& e : events()) {
      if (e["ph"] == "C" && e["name"] == std::string("GPU 2 ") + metric) {
        exported.emplace_back(e["ts"].get<double>(), e["args"][unit].get<double>());
      }
    }
    // Read as doubles (SQLite's text of a REAL has only 15 digits): equal bit for bit.
    store::Database db(db_, SQLITE_OPEN_READONLY);
    store::Statement rows = db.prepare(std::string("SELECT wall_ns, ") + metric +
                                       " FROM samples WHERE device_index = 2 AND " + metric +
                                       " IS NOT NULL ORDER BY mono_ns");
    std::size_t i = 0;
    while (rows.step()) {
      ASSERT_LT(i, exported.size()) << metric;
      EXPECT_NEAR(exported[i].first, ts_of(rows.int64(0), t0()), 1e-6);
      EXPECT_EQ(exported[i].second, rows.real(1)) << metric << " sample " << i;
      ++i;
    }
    EXPECT_EQ(i, exported.size()) << metric;
    EXPECT_GE(i, 2u) << metric;
  }
  // Every non-NULL value of every sample, and of every fast power sample, is one counter event.
  std::string sum = "SELECT ";
  const auto columns = query(db_, "SELECT name FROM metrics ORDER BY position");
  for (std::size_t i = 0; i < columns.size(); ++i) {
    sum += (i ? " + " : "") + std::string("count(") + *columns[i][0] + ")";
  }
  const double expected =
      number(db_, sum + " FROM samples") +
      number(
          db_,
          "SELECT count(power_w) + count(power_instant_w) + count(energy_mj) FROM power_samples");
  std::int64_t counters = 0;
  std::int64_t fast = 0;
  for (const json& e : events()) {
    if (e["ph"] != "C") continue;
    ++counters;
    if (e["name"].get<std::string>().ends_with("(fast)")) ++fast;
  }
  EXPECT_EQ(counters, static_cast<std::int64_t>(expected));
  EXPECT_GT(fast, 0);
}

TEST_F(PerfettoExport, SlicesAreTheKernelRecords) {
  const auto rows =
      query(db_,
            "SELECT k.start_wall_ns, k.end_wall_ns - k.start_wall_ns, n.short_name, "
            "n.demangled_name, k.stream_id, k.grid_x FROM kernels k JOIN kernel_names "
            "n USING (run_id, name_id) ORDER BY k.stream_id, k.start_mono_ns");
  std::vector<const json*> slices;
  for (const json& e : events()) {
    if (e["ph"] == "X" && e["cat"] == "kernel") slices.push_back(&e);
  }
  ASSERT_EQ(slices.size(), 7u);
  ASSERT_EQ(rows.size(), 7u);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const json& s = *slices[i];
    EXPECT_NEAR(s["ts"].get<double>(), ts_of(std::stoll(*rows[i][0]), t0()), 1e-6);
    EXPECT_NEAR(s["dur"].get<double>(), std::stod(*rows[i][1]) / 1000.0, 1e-9);
    EXPECT_EQ(s["dur"].get<double>(), 0.25);
    EXPECT_EQ(s["name"], *rows[i][2]);
    EXPECT_EQ(s["name"], "kernel");
    EXPECT_EQ(s["args"]["name"], *rows[i][3]);
    EXPECT_EQ(s["args"]["stream"], std::stoi(*rows[i][4]));
    EXPECT_EQ(s["args"]["grid"][0], 4);
  }
  int memcpy = 0;
  int memset = 0;
  for (const json& e : events()) {
    if (e["ph"] != "X") continue;
    if (e["cat"] == "memcpy") {
      ++memcpy;
      EXPECT_EQ(e["name"], "[CUDA memcpy Device-to-Host]");
      EXPECT_EQ(e["args"]["bytes"], 4096);
      EXPECT_EQ(e["dur"].get<double>(), 2.0);
    }
    if (e["cat"] == "memset") ++memset;
  }
  EXPECT_EQ(memcpy, 1);
  EXPECT_EQ(memset, 1);
}

TEST_F(PerfettoExport, EventsAreInstants) {
  const auto rows = query(db_, "SELECT kind, wall_ns FROM events ORDER BY mono_ns");
  std::vector<const json*> instants;
  for (const json& e : events()) {
    if (e["ph"] == "i") instants.push_back(&e);
  }
  ASSERT_EQ(instants.size(), rows.size());
  ASSERT_GE(rows.size(), 2u);  // job_start, job_exit
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ((*instants[i])["name"], *rows[i][0]);
    EXPECT_NEAR((*instants[i])["ts"].get<double>(), ts_of(std::stoll(*rows[i][1]), t0()), 1e-6);
  }
}

TEST_F(PerfettoExport, OnlyAskedMetricsAndMergedRuns) {
  // A second rank merged with the first: two processes.
  const std::string second = dir_->file("rank1.db");
  ProcessResult r = run_gpuscope({"profile", "--simulate", "h100x4-straggler", "-q", "-s", "50",
                                  "-o", second, "--", "sleep", "0.1"},
                                 {{"SLURM_JOB_ID", "9"}, {"SLURM_PROCID", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string merged = dir_->file("merged.db");
  r = run_gpuscope({"merge", merged, db_, second});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string out = dir_->file("merged.json");
  r = run_gpuscope({"export", "--perfetto", out, "--metrics", "power_w", merged});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(read_file(out));
  std::set<int> pids;
  std::set<std::string> counter_names;
  std::set<std::string> process_names;
  int slices = 0;
  for (const json& e : j["traceEvents"]) {
    pids.insert(e["pid"].get<int>());
    if (e["ph"] == "C") counter_names.insert(e["name"]);
    if (e["ph"] == "X") ++slices;
    if (e["name"] == "process_name") process_names.insert(e["args"]["name"]);
  }
  EXPECT_EQ(pids, (std::set<int>{1, 2}));
  EXPECT_EQ(counter_names,
            (std::set<std::string>{"GPU 0 power_w", "GPU 1 power_w", "GPU 2 power_w",
                                   "GPU 3 power_w", "GPU 0 power_w (fast)", "GPU 1 power_w (fast)",
                                   "GPU 2 power_w (fast)", "GPU 3 power_w (fast)"}));
  EXPECT_EQ(slices, 9);  // the kernel trace came through merge
  EXPECT_EQ(process_names.size(), 2u);
  bool rank = false;
  for (const auto& name : process_names) rank |= name.find("rank 1") != std::string::npos;
  EXPECT_TRUE(rank);
}

TEST_F(PerfettoExport, Errors) {
  const std::string out = dir_->file("trace.json");  // exists
  ProcessResult r = run_gpuscope({"export", "--perfetto", out, db_});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("trace.json exists; use -f"), std::string::npos) << r.err;
  r = run_gpuscope({"export", "--perfetto", dir_->file("x.json"), dir_->file("missing.db")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_->file("x.json")));
  EXPECT_FALSE(fs::exists(dir_->file("x.json.partial")));
  r = run_gpuscope({"export", "--perfetto", dir_->file("x.json"), out});  // JSON, not a database
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not a"), std::string::npos) << r.err;
  r = run_gpuscope({"export", "--perfetto", dir_->file("x.json"), "--metrics", "watts", db_});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown metric 'watts'"), std::string::npos) << r.err;
  r = run_gpuscope({"export", db_});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--perfetto"), std::string::npos) << r.err;
  // -f replaces.
  r = run_gpuscope({"export", "--perfetto", out, "-f", "--no-kernels", db_});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(out).find("\"cat\":\"kernel\""), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::testing
