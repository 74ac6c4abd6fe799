// Phases through the binary (docs/phases.md): a job marks phases with `gpuscope mark` and with
// the documented Python snippet, or prints lines that --phase patterns match, under `profile
// --simulate` of a scenario whose power and activity change at known times; analyze's figures per
// phase are checked against the scenario's physics. Then what goes wrong: unbalanced marks, a job
// killed inside a phase, a profiler that is gone, bad patterns, lines that are not marks.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "support/process.hpp"
#include "support/sql.hpp"

namespace gpuscope::testing {
namespace {

using nlohmann::json;

const std::string kScenario = std::string(GPUSCOPE_TEST_FIXTURE_SCENARIO_DIR) + "/phases.json";
const std::string kGpuscope = GPUSCOPE_TEST_BINARY;

// The snippet of docs/phases.md, "Marks from Python", as a user would paste it.
const char* kPythonSnippet = R"(import os, socket, threading, time
from contextlib import contextmanager

def _connect():
    address = os.environ.get("GPUSCOPE_MARK_SOCKET")
    if not address:
        return None  # not under gpuscope profile: marks do nothing
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(address)
        s.setblocking(False)
        return s
    except OSError:
        return None

_socket = _connect()

def mark(kind, name, instance=""):
    """kind: "begin", "end" or "point". Never blocks; does nothing outside gpuscope profile."""
    if _socket is None:
        return
    line = "GSM1\t%s\t%d\t%d\t%d\t%s\t%s\n" % (kind, time.monotonic_ns(), os.getpid(),
                                               threading.get_native_id(), instance, name)
    try:
        _socket.send(line.encode())
    except OSError:
        pass  # the profiler is gone or busy: the job goes on

@contextmanager
def phase(name, instance=""):
    mark("begin", name, str(instance))
    try:
        yield
    finally:
        mark("end", name)
)";

class Phases : public ::testing::Test {
 protected:
  TempDir dir_;
  std::string db_ = dir_.file("run.db");
  std::map<std::string, std::string> env_{{"GPUSCOPE_SIM_STATE", dir_.file("state.json")},
                                          {"CUDA_VISIBLE_DEVICES", "\x01"},
                                          {"SLURM_JOB_ID", "\x01"}};

  ProcessResult profile(std::vector<std::string> options, std::vector<std::string> command) {
    std::vector<std::string> args{"profile", "--simulate", kScenario, "-q", "-s", "50", "-o", db_};
    args.insert(args.end(), options.begin(), options.end());
    args.push_back("--");
    args.insert(args.end(), command.begin(), command.end());
    return run_gpuscope(args, env_);
  }

  json analysis() {
    const ProcessResult r = run_gpuscope({"analyze", db_, "--json"}, env_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }

  static const json& name_of(const json& analysis, const std::string& name) {
    for (const auto& n : analysis["phases"]["names"]) {
      if (n["name"] == name) return n;
    }
    static const json none;
    ADD_FAILURE() << "no phase named " << name << " in " << analysis["phases"].dump();
    return none;
  }
};

// The scenario: load 150 W (0-1 s), compute 500 W, SMs 90 %, tensor 60 % (1-3.5 s), checkpoint
// 120 W, SMs 1 % (3.5-6 s), compute. The marks sit well inside those phases, so each phase's
// energy is its power times its measured time.
//
// Each mark is placed on the scenario's clock, not after the previous one: the scenario's time
// zero is set two seconds ahead (GPUSCOPE_SIM_EPOCH_NS) and the job waits for each mark's time
// on the wall clock, so neither the profiler's start nor the marks' own cost (far longer in a
// sanitized build) moves a mark towards a phase's edge.
TEST_F(Phases, MarkedPhasesGetTheScenariosEnergyAndActivity) {
  const std::string m = kGpuscope + " mark";
  const auto epoch_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count() +
                        2'000'000'000;
  env_["GPUSCOPE_SIM_EPOCH_NS"] = std::to_string(epoch_ns);
  // at N: sleeps until N ns of scenario time; says "late" when that time has passed.
  const std::string at =
      "at() { d=$(( " + std::to_string(epoch_ns) +
      " + $1 - $(date +%s%N) )); if [ $d -gt 0 ]; then sleep $(awk \"BEGIN { print $d / 1e9 }\"); "
      "else echo late for $1 >&2; fi; }; ";
  const ProcessResult r =
      profile({}, {"sh", "-c",
                   at + "at 1400000000; " + m + " begin compute; at 2900000000; " + m +
                       " end compute; at 3800000000; " + m + " begin checkpoint; at 5300000000; " +
                       m + " end checkpoint; sleep 0.2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(r.err.find("late for"), std::string::npos) << r.err;
  EXPECT_EQ(number(db_, "SELECT count(*) FROM phases WHERE source = 'mark' AND closed = 1"), 2);

  const json a = analysis();
  const json& compute = name_of(a, "compute");
  ASSERT_FALSE(compute.is_null());
  EXPECT_EQ(compute["count"], 1);
  const double compute_s = compute["total"]["time_s"];
  EXPECT_NEAR(compute_s, 1.5, 0.3);
  EXPECT_NEAR(compute["total"]["energy_j"].get<double>(), 500 * compute_s, 0.02 * 500 * compute_s);
  EXPECT_NEAR(compute["total"]["mean_power_w"].get<double>(), 500, 10);
  EXPECT_NEAR(compute["total"]["metrics"]["sm_active_pct"].get<double>(), 90, 1);
  EXPECT_NEAR(compute["total"]["metrics"]["tensor_active_pct"].get<double>(), 60, 1);

  const json& checkpoint = name_of(a, "checkpoint");
  ASSERT_FALSE(checkpoint.is_null());
  const double checkpoint_s = checkpoint["total"]["time_s"];
  EXPECT_NEAR(checkpoint["total"]["energy_j"].get<double>(), 120 * checkpoint_s,
              0.03 * 120 * checkpoint_s);
  EXPECT_NEAR(checkpoint["total"]["metrics"]["sm_active_pct"].get<double>(), 1, 1);
  // Its share of the job's energy, from the job's own total.
  const double job_j = a["energy_j"]["counter"];
  EXPECT_NEAR(checkpoint["total"]["energy_share"].get<double>(),
              checkpoint["total"]["energy_j"].get<double>() / job_j, 1e-9);
  bool waiting = false;
  for (const auto& f : a["findings"]) {
    if (f["kind"] == "phase_waiting") {
      waiting = true;
      EXPECT_NE(f["text"].get<std::string>().find("checkpoint took"), std::string::npos) << f;
    }
  }
  EXPECT_TRUE(waiting) << a["findings"].dump();
}

// The Python snippet of the docs: nested phases (steps inside an epoch) with instances.
TEST_F(Phases, PythonSnippetNestedPhases) {
  std::ofstream(dir_.file("job.py")) << kPythonSnippet << R"(
with phase("epoch", 1):
    for step in range(3):
        with phase("step", step):
            time.sleep(0.15)
        time.sleep(0.05)
mark("point", "done")
)";
  const ProcessResult r = profile({}, {"python3", dir_.file("job.py")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json a = analysis();
  const json& epoch = name_of(a, "epoch");
  const json& step = name_of(a, "step");
  ASSERT_FALSE(epoch.is_null());
  ASSERT_FALSE(step.is_null());
  EXPECT_EQ(step["count"], 3);
  EXPECT_EQ(epoch["count"], 1);
  // The epoch's own time is what its steps do not cover: the 0.05 s pauses.
  const double epoch_s = epoch["total"]["time_s"];
  const double steps_s = step["total"]["time_s"];
  EXPECT_NEAR(epoch["total"]["exclusive_time_s"].get<double>(), epoch_s - steps_s, 1e-6);
  EXPECT_NEAR(steps_s, 0.45, 0.1);
  EXPECT_NEAR(
      epoch["total"]["exclusive_energy_j"].get<double>() + step["total"]["energy_j"].get<double>(),
      epoch["total"]["energy_j"].get<double>(), 1e-6);
  std::vector<std::string> instances;
  for (const auto& i : a["phases"]["instances"]) {
    if (i["name"] == "step") {
      instances.push_back(i["instance"]);
      EXPECT_EQ(i["depth"], 1);
    }
  }
  EXPECT_EQ(instances, (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(a["phases"]["point_count"], 1);
}

// Perfetto: phases as slices on their own track, nested as they were.
TEST_F(Phases, PerfettoHasThePhasesAsSlices) {
  std::ofstream(dir_.file("job.py")) << kPythonSnippet << R"(
with phase("epoch", 1):
    for step in range(2):
        with phase("step", step):
            time.sleep(0.1)
mark("point", "saved")
)";
  ASSERT_EQ(profile({}, {"python3", dir_.file("job.py")}).exit_code, 0);
  const ProcessResult r =
      run_gpuscope({"export", "--perfetto", dir_.file("trace.json"), db_}, env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("4 phases"), std::string::npos) << r.err;
  std::ifstream in(dir_.file("trace.json"));
  const json trace = json::parse(in);
  std::map<std::string, json> slices;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("cat", "").rfind("phase", 0) == 0) slices[e["name"]] = e;
  }
  ASSERT_EQ(slices.size(), 4U) << trace.dump().substr(0, 2000);
  const json& epoch = slices["epoch 1"];
  for (const char* step : {"step 0", "step 1"}) {
    const json& s = slices[step];
    EXPECT_EQ(s["tid"], epoch["tid"]);  // one track: the process's thread
    EXPECT_GE(s["ts"].get<double>(), epoch["ts"].get<double>());
    EXPECT_LE(s["ts"].get<double>() + s["dur"].get<double>(),
              epoch["ts"].get<double>() + epoch["dur"].get<double>());
    EXPECT_NEAR(s["dur"].get<double>(), 100'000, 30'000);  // µs
    EXPECT_EQ(s["args"]["source"], "mark");
  }
  EXPECT_EQ(slices["saved"]["cat"], "phase point");
  EXPECT_EQ(slices["saved"]["dur"], 0);
}

// A million tiny ranges (as a job with NVTX around every layer makes): analyze lists the first
// 10 000 and sums them all; the report draws them in bins, its size independent of their count.
TEST_F(Phases, AMillionTinyRanges) {
  ASSERT_EQ(profile({}, {"sleep", "1"}).exit_code, 0);
  const std::string insert =
      "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 999999) "
      "INSERT INTO phases (run_id, source, name, instance, pid, tid, start_mono_ns, end_mono_ns, "
      "kind, closed) SELECT r.run_id, 'nvtx', CASE WHEN i % 100 = 0 THEN 'step' ELSE 'layer' END, "
      "NULL, 1, 1, r.start_mono_ns + i * 900, r.start_mono_ns + i * 900 + CASE WHEN i % 100 = 0 "
      "THEN 89000 ELSE 500 END, 'range', 1 FROM c, runs r";
  ASSERT_EQ(std::system(("sqlite3 '" + db_ + "' \"" + insert + "\"").c_str()), 0);
  const json a = analysis();
  EXPECT_EQ(a["phases"]["instance_count"], 1'000'000);
  EXPECT_EQ(a["phases"]["instances"].size(), 10'000U);
  EXPECT_EQ(name_of(a, "layer")["count"], 990'000);
  EXPECT_NEAR(name_of(a, "step")["total"]["time_s"].get<double>(), 10'000 * 89e-6, 1e-6);
  const ProcessResult r = run_gpuscope({"report", db_, "-o", dir_.file("r.html")}, env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(std::filesystem::file_size(dir_.file("r.html")), 2'000'000U);
}

TEST_F(Phases, OutputLinesDefinePhases) {
  const ProcessResult r =
      profile({"--phase", "epoch=epoch (\\d+) start", "--phase", "eval=eval begins", "--phase-end",
               "eval=eval done"},
              {"sh", "-c",
               "echo 'epoch 1 start'; sleep 0.3; echo 'eval begins'; sleep 0.2; echo 'eval "
               "done'; echo 'epoch 2 start'; sleep 0.3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(scalar(db_,
                   "SELECT group_concat(name || ':' || instance || ':' || closed, ' ') FROM "
                   "(SELECT * FROM phases ORDER BY start_mono_ns, name)"),
            "epoch:1:1 eval:1:1 epoch:2:1");
  // The output lines were stored too (--phase captures them).
  EXPECT_EQ(number(db_, "SELECT count(*) FROM output"), 4);
  const double epoch1 = number(db_,
                               "SELECT (end_mono_ns - start_mono_ns) / 1e9 FROM phases WHERE "
                               "name = 'epoch' AND instance = '1'");
  EXPECT_NEAR(epoch1, 0.5, 0.15);
}

TEST_F(Phases, UnbalancedMarksAreSaidNotInvented) {
  const std::string m = kGpuscope + " mark";
  const ProcessResult r = profile({}, {"sh", "-c",
                                       m + " end ghost; " + m + " begin open; sleep 0.2; " + m +
                                           " begin inner; sleep 0.1; " + m + " end inner"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(number(db_, "SELECT count(*) FROM phases"), 2);
  EXPECT_EQ(number(db_, "SELECT closed FROM phases WHERE name = 'open'"), 0);
  const std::string problems = scalar(db_, "SELECT problems FROM runs").value_or("");
  EXPECT_NE(problems.find("1 phase end closed nothing"), std::string::npos) << problems;
  EXPECT_NE(problems.find("'ghost'"), std::string::npos) << problems;
  EXPECT_NE(problems.find("1 phase never ended"), std::string::npos) << problems;
  EXPECT_NE(r.err.find("phase never ended"), std::string::npos) << r.err;
  // The open phase ends with the job: it covers the inner one.
  const json a = analysis();
  EXPECT_EQ(name_of(a, "open")["unclosed"], 1);
  EXPECT_GE(name_of(a, "open")["total"]["time_s"].get<double>(),
            name_of(a, "inner")["total"]["time_s"].get<double>());
}

TEST_F(Phases, JobKilledInsideAPhase) {
  const std::string m = kGpuscope + " mark";
  const ProcessResult r = profile({}, {"sh", "-c", m + " begin doomed; sleep 0.3; kill -KILL $$"});
  EXPECT_EQ(r.exit_code, 137) << r.err;
  EXPECT_EQ(number(db_, "SELECT closed FROM phases WHERE name = 'doomed'"), 0);
  EXPECT_NEAR(number(db_,
                     "SELECT (p.end_mono_ns - r.end_mono_ns) / 1e9 FROM phases p JOIN runs r "
                     "USING (run_id)"),
              0, 0.05);
}

TEST_F(Phases, MarkWithoutAProfilerNeverFailsTheJob) {
  // Outside gpuscope profile: nothing happens, silently.
  auto env = env_;
  env["GPUSCOPE_MARK_SOCKET"] = "\x01";
  ProcessResult r = run_gpuscope({"mark", "begin", "x"}, env);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "");
  r = run_gpuscope({"mark", "begin", "x", "--strict"}, env);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("GPUSCOPE_MARK_SOCKET is not set"), std::string::npos) << r.err;
  // A profiler that has gone (its socket removed): said once, exit 0 unless --strict.
  env["GPUSCOPE_MARK_SOCKET"] = dir_.file("gone/marks");
  r = run_gpuscope({"mark", "end", "x"}, env);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("was not delivered"), std::string::npos) << r.err;
  r = run_gpuscope({"mark", "end", "x", "-q", "--strict"}, env);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "");
  // Bad input.
  r = run_gpuscope({"mark", "start", "x"}, env);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'start' is not a kind of mark"), std::string::npos) << r.err;
  r = run_gpuscope({"mark", "begin", "\t \n"}, env);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no name"), std::string::npos) << r.err;
}

TEST_F(Phases, LinesThatAreNotMarksAreCounted) {
  std::ofstream(dir_.file("job.py")) << R"(import os, socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(os.environ["GPUSCOPE_MARK_SOCKET"])
s.sendall(b"hello\nGSM1\tbegin\tnot-a-time\t1\t\t\tx\nGSM2\tbegin\t1\t1\t\t\tx\n" + b"y" * 9000 + b"\n")
)";
  const ProcessResult r = profile({}, {"python3", dir_.file("job.py")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(number(db_, "SELECT count(*) FROM phases"), 0);
  const std::string problems = scalar(db_, "SELECT problems FROM runs").value_or("");
  EXPECT_NE(problems.find("4 lines on the marks' socket were not a mark (the last: a line longer "
                          "than 4096 bytes)"),
            std::string::npos)
      << problems;
}

TEST_F(Phases, NoMarksLeavesTheJobWithoutTheSocket) {
  const ProcessResult r =
      profile({"--no-marks"}, {"sh", "-c", "test -z \"$GPUSCOPE_MARK_SOCKET\""});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const ProcessResult with = profile({"-f"}, {"sh", "-c", "test -S \"$GPUSCOPE_MARK_SOCKET\""});
  EXPECT_EQ(with.exit_code, 0) << with.err;
}

TEST_F(Phases, BadPatternsAreRefusedBeforeTheJobRuns) {
  ProcessResult r = profile({"--phase", "epoch=("}, {"touch", dir_.file("ran")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--phase 'epoch=(' is not a valid regular expression"), std::string::npos)
      << r.err;
  r = profile({"--phase", "a=x", "--phase-end", "b=y"}, {"touch", dir_.file("ran")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'b', which no --phase begins"), std::string::npos) << r.err;
  r = profile({"--phase", "a=x", "--phase", "a=y"}, {"touch", dir_.file("ran")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("already given"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_.file("ran")));
}

// Two runs (as two ranks would write) merged: each keeps its phases, measured on its own GPU.
TEST_F(Phases, MergeKeepsEachRunsPhases) {
  const std::string m = kGpuscope + " mark";
  for (const char* rank : {"0", "1"}) {
    db_ = dir_.file(std::string("rank") + rank + ".db");
    const ProcessResult r = profile(
        {}, {"sh", "-c", m + " begin work --instance " + rank + "; sleep 0.2; " + m + " end work"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const ProcessResult merged = run_gpuscope(
      {"merge", dir_.file("merged.db"), dir_.file("rank0.db"), dir_.file("rank1.db")}, env_);
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  db_ = dir_.file("merged.db");
  EXPECT_EQ(scalar(db_,
                   "SELECT group_concat(instance, ',') FROM (SELECT instance FROM phases "
                   "ORDER BY instance)"),
            "0,1");
  const json a = analysis();
  EXPECT_EQ(name_of(a, "work")["count"], 2);
  // Each run's phase is measured on its own GPU only.
  const auto& per_gpu = name_of(a, "work")["gpu_energy_j"];
  ASSERT_EQ(per_gpu.size(), 2U);
  EXPECT_FALSE(per_gpu[0].is_null());
  EXPECT_FALSE(per_gpu[1].is_null());
  EXPECT_NEAR(per_gpu[0].get<double>() + per_gpu[1].get<double>(),
              name_of(a, "work")["total"]["energy_j"].get<double>(), 1e-6);
}

}  // namespace
}  // namespace gpuscope::testing
