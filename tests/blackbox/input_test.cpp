// Hostile input through the binary: numbers that are not numbers, scenarios built to
// exhaust the stack or memory, state files that never end, bytes that are not UTF-8, and
// infinities in a run database. Each must end in one clear message or in valid output.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/process.hpp"
#include "support/sql.hpp"

namespace gpuscope::testing {
namespace {

using nlohmann::json;

class Input : public ::testing::Test {
 protected:
  TempDir dir_;
  std::map<std::string, std::string> env_{{"GPUSCOPE_SIM_STATE", dir_.file("state.json")},
                                          {"CUDA_VISIBLE_DEVICES", "\x01"},
                                          {"SLURM_JOB_ID", "\x01"}};

  // A short profiled run of the simulated H100; extra options before the command.
  std::string profile(const std::vector<std::string>& extra, std::vector<std::string> command) {
    const std::string db = dir_.file("run.db");
    std::vector<std::string> args{"profile", "--simulate", "h100", "-q", "-s",
                                  "20",      "-f",         "-o",   db};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back("--");
    args.insert(args.end(), command.begin(), command.end());
    const ProcessResult r = run_gpuscope(args, env_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return db;
  }

  // Runs sqlite3's shell on db (the statements a hostile user could run).
  static void sql(const std::string& db, const std::string& statements) {
    const ProcessResult r = run_process({"sqlite3", db, statements});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // A scenario file in the temp dir with the given text.
  std::string scenario(const std::string& name, const std::string& text) {
    const std::string path = dir_.file(name);
    std::ofstream(path) << text;
    return path;
  }
};

struct NumericCase {
  std::vector<std::string> command;  // up to the option
  std::string option;                // as typed
  std::string long_name;             // as the message names it
};

// Every numeric option of every command refuses NaN, infinities, huge values and junk with one
// message shape and exit code 2, before anything runs (`profile -s nan` sampled flat out
// and `--pue nan` printed "carbon nan gCO2e").
TEST_F(Input, EveryNumericOptionRefusesNanInfinityAndJunk) {
  const std::string db = dir_.file("absent.db");
  const std::vector<NumericCase> cases = {
      {{"profile"}, "-s", "--sampling-ms"},
      {{"profile"}, "--sampling-ms", "--sampling-ms"},
      {{"profile"}, "--power-sampling-ms", "--power-sampling-ms"},
      {{"profile"}, "-m", "--max-runtime"},
      {{"profile"}, "--kill-grace", "--kill-grace"},
      {{"profile"}, "--push-batch-ms", "--push-batch-ms"},
      {{"analyze", db}, "--pue", "--pue"},
      {{"analyze", db}, "--carbon-intensity", "--carbon-intensity"},
      {{"analyze", db}, "--straggler-threshold", "--straggler-threshold"},
      {{"analyze", db}, "--work-units", "--work-units"},
      {{"analyze", db}, "--resolution", "--resolution"},
      {{"report", db, "-o", dir_.file("r.html")}, "--pue", "--pue"},
      {{"sweep", "--power-limits", "300"}, "--repeat", "--repeat"},
      {{"sweep", "--power-limits", "300"}, "--eta", "--eta"},
      {{"sweep", "--power-limits", "300"}, "--warmup", "--warmup"},
      {{"sweep", "--power-limits", "300"}, "--settle", "--settle"},
      {{"sweep", "--power-limits", "300"}, "-s", "--sampling-ms"},
      {{"sweep", "--power-limits", "300"}, "--work-units", "--work-units"},
      {{"monitor", "--simulate", "h100", "--once"}, "-i", "--interval"},
      {{"serve", "--simulate", "h100"}, "--interval", "--interval"},
      {{"kernels", db}, "--top", "--top"},
  };
  const std::string marker = dir_.file("ran");
  for (const NumericCase& c : cases) {
    for (const std::string value : {"nan", "inf", "-inf", "1e19", "1e999", "12x", "0x10"}) {
      std::vector<std::string> args = c.command;
      args.insert(args.end(), {c.option, value});
      if (c.command[0] == "profile" || c.command[0] == "sweep") {
        args.insert(args.end(), {"--", "touch", marker});
      }
      const ProcessResult r = run_gpuscope(args, env_);
      const std::string what = c.command[0] + " " + c.option + " " + value;
      EXPECT_EQ(r.exit_code, 2) << what << "\n" << r.err;
      EXPECT_EQ(r.err.rfind("gpuscope: error: " + c.long_name + " " + value + " is not a ", 0), 0U)
          << what << "\n"
          << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << what << "\n" << r.err;
    }
  }
  EXPECT_FALSE(std::filesystem::exists(marker)) << "a job ran despite a bad number";
}

TEST_F(Input, NumericMessagesNameTheRange) {
  const ProcessResult r = run_gpuscope({"analyze", dir_.file("x.db"), "--pue", "nan"});
  EXPECT_EQ(r.err,
            "gpuscope: error: --pue nan is not a number between 1 and 5; run 'gpuscope analyze "
            "--help' for usage\n");
  const ProcessResult huge = run_gpuscope({"profile", "-s", "1e18", "--", "true"});
  EXPECT_EQ(huge.exit_code, 2);
  EXPECT_NE(huge.err.find("--sampling-ms 1e18 is not a number"), std::string::npos) << huge.err;
  const ProcessResult s = run_gpuscope({"profile", "-s", "5", "--", "true"});
  EXPECT_NE(s.err.find("--sampling-ms 5 is not a number between 10 and 3600000 ms"),
            std::string::npos)
      << s.err;
}

// 15,000 nested repeat blocks overflowed the simulator's stack (SIGSEGV); now one message.
TEST_F(Input, DeeplyNestedScenarioIsRefused) {
  std::string phases = R"([{"name": "p", "duration_s": 1}])";
  for (int i = 0; i < 15'000; ++i) phases = R"([{"repeat": 1, "phases": )" + phases + "}]";
  const std::string path =
      scenario("deep.json", R"({"gpus": [{"model": "H100-SXM5-80GB"}], "phases": )" + phases + "}");
  const ProcessResult r = run_gpuscope({"devices", "--simulate", path}, env_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.exit_code, 128) << "killed by a signal";
  EXPECT_NE(r.err.find("nested deeper than 64 levels"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
}

// A state_file on /dev/zero, /dev/urandom or a FIFO hung `devices` with memory growing.
TEST_F(Input, StateFileThatIsNotARegularFileIsRefused) {
  const std::string fifo = dir_.file("state.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto env = env_;
  env["GPUSCOPE_SIM_STATE"] = "\x01";  // the scenario's state_file, not the tests' override
  for (const std::string& target : {std::string("/dev/zero"), std::string("/dev/urandom"), fifo}) {
    const std::string path =
        scenario("dev.json", R"({"name": "dev", "state_file": ")" + target + R"(",
          "phases": [{"name": "idle", "duration_s": 1}], "gpus": [{"model": "H100-SXM5-80GB"}]})");
    const ProcessResult r = run_gpuscope({"devices", "--simulate", path}, env);
    EXPECT_NE(r.exit_code, 0) << target;
    EXPECT_NE(r.err.find(target + " is not a regular file"), std::string::npos) << r.err;
  }
}

// The other files gpuscope reads whole or in part: a scenario given to --simulate, the sweep's
// restore record, the push credentials. Devices and FIFOs are refused (or, for credentials, read
// only up to a first line of 64 KiB), never read forever or waited on.
TEST_F(Input, OtherInputFilesThatNeverEndAreRefused) {
  const std::string fifo = dir_.file("f.json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {std::string("/dev/zero"), fifo}) {
    const ProcessResult r = run_gpuscope({"devices", "--simulate", path}, env_);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("scenario " + path + " is not a regular file"), std::string::npos)
        << r.err;
  }
  const std::string record = dir_.file("s.db.restore.json");
  ASSERT_EQ(::mkfifo(record.c_str(), 0600), 0);
  const ProcessResult restore =
      run_gpuscope({"sweep", "--restore", "-o", dir_.file("s.db"), "--simulate", "h100"}, env_);
  EXPECT_EQ(restore.exit_code, 1) << restore.err;
  EXPECT_NE(restore.err.find("a FIFO, not a regular file"), std::string::npos) << restore.err;
  const std::string marker = dir_.file("ran");
  const ProcessResult push =
      run_gpuscope({"profile", "--simulate", "h100", "-o", dir_.file("p.db"), "--push",
                    "http://127.0.0.1:1", "--push-auth-file", "/dev/zero", "--", "touch", marker},
                   env_);
  EXPECT_EQ(push.exit_code, 2) << push.err;
  EXPECT_NE(push.err.find("no line break in its first 64 KiB"), std::string::npos) << push.err;
  EXPECT_FALSE(std::filesystem::exists(marker));
}

// A FIFO given as an input database made analyze, report, export, merge and kernels wait for a
// writer for ever (SQLite opens it and blocks).
TEST_F(Input, InputDatabaseThatIsAFifoIsRefused) {
  const std::string fifo = dir_.file("fifo.db");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::vector<std::vector<std::string>> commands = {
      {"analyze", fifo},
      {"report", fifo, "-o", dir_.file("r.html")},
      {"export", "--perfetto", dir_.file("t.json"), fifo},
      {"merge", dir_.file("m.db"), fifo},
      {"kernels", fifo},
  };
  for (const auto& command : commands) {
    const ProcessResult r = run_gpuscope(command, env_);
    EXPECT_EQ(r.exit_code, 2) << command[0] << ": " << r.err;
    EXPECT_NE(r.err.find("not a regular file"), std::string::npos) << command[0] << ": " << r.err;
  }
}

// A run database holds tables, indexes and gpuscope's own triggers. A view of an endless
// recursion under a table's name made analyze and merge run for ever; a view, a virtual table or
// a trigger that is not gpuscope's own is refused, with the object named, before any read.
TEST_F(Input, RunDatabaseWithAViewOrAForeignTriggerIsRefusedNotRunForEver) {
  const std::string original = profile({}, {"sleep", "0.2"});
  struct Case {
    std::string statements;
    std::string message;
  };
  const std::vector<Case> cases{
      {"DROP TABLE devices; CREATE VIEW devices AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL "
       "SELECT i + 1 FROM n) SELECT 1 AS run_id, i AS device_index FROM n WHERE i % 7 = 9;",
       "holds a view (devices)"},
      {"CREATE TRIGGER extra AFTER INSERT ON runs BEGIN SELECT 1; END;", "holds a trigger (extra)"},
      {"DROP TRIGGER samples_insert_uncounts; CREATE TRIGGER samples_insert_uncounts AFTER "
       "INSERT ON samples BEGIN SELECT 1; END;",
       "holds a trigger (samples_insert_uncounts)"},
      {"CREATE VIRTUAL TABLE notes USING fts5(x);", "holds a virtual table (notes)"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string db = dir_.file("hostile" + std::to_string(i) + ".db");
    std::filesystem::copy_file(original, db);
    sql(db, cases[i].statements);
    const std::vector<std::vector<std::string>> commands = {
        {"analyze", db}, {"merge", dir_.file("m.db"), db}, {"kernels", db}};
    for (const auto& command : commands) {
      // `timeout` stands for the user's patience: a command that hangs is killed (137).
      std::vector<std::string> argv{"timeout", "-s", "KILL", "60", GPUSCOPE_TEST_BINARY};
      argv.insert(argv.end(), command.begin(), command.end());
      const ProcessResult r = run_process(argv, env_);
      EXPECT_EQ(r.exit_code, 2) << command[0] << ": " << r.err;
      EXPECT_NE(
          r.err.find(db + " is not a run database as gpuscope writes them: it " + cases[i].message),
          std::string::npos)
          << command[0] << ": " << r.err;
      EXPECT_FALSE(std::filesystem::exists(dir_.file("m.db")));
    }
  }
}

// Bytes that are not UTF-8 in a label and in the job's arguments: stored as given, shown as
// U+FFFD in JSON (analyze --json failed with "internal error: invalid UTF-8").
TEST_F(Input, NonUtf8LabelAndArgumentsGiveValidJson) {
  const std::string db = profile({"-l", "lab\xff\xfe"}, {"sh", "-c", "true", "arg\xff"});
  EXPECT_EQ(scalar(db, "SELECT hex(label) FROM runs"), "6C6162FFFE");
  // command_line keeps the bytes; the JSON array `command` cannot (JSON text is UTF-8).
  EXPECT_NE(scalar(db, "SELECT hex(command_line) FROM runs").value_or("").find("617267FF"),
            std::string::npos);
  const ProcessResult r = run_gpuscope({"analyze", "--json", db});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);  // throws on invalid UTF-8
  EXPECT_NE(out.dump().find("lab\xef\xbf\xbd"), std::string::npos);
  const ProcessResult trace = run_gpuscope({"export", "--perfetto", dir_.file("t.json"), db});
  ASSERT_EQ(trace.exit_code, 0) << trace.err;
  EXPECT_TRUE(json::accept(read_file(dir_.file("t.json"))));
}

// inf and -inf stored in a run database (SQLite keeps 9e999 as inf) became "W":inf in the
// Perfetto trace. Every JSON output must parse strictly, non-finite numbers as null.
TEST_F(Input, InfiniteSamplesGiveValidJsonEverywhere) {
  const std::string db = profile({"--power-sampling-ms", "10"}, {"sleep", "0.3"});
  // The chunks hold the samples a second time; without them readers take the rows.
  sql(db,
      "DELETE FROM sample_chunks; "
      "UPDATE samples SET power_w = 9e999, temperature_c = -9e999 WHERE rowid % 2 = 0; "
      "UPDATE samples SET gpu_util_pct = 9e999 WHERE rowid % 3 = 0; "
      "UPDATE power_samples SET power_w = -9e999 WHERE rowid % 2 = 0;");
  ASSERT_GT(number(db, "SELECT count(*) FROM samples WHERE power_w = 9e999"), 0)
      << "the injection did not store inf";

  const std::string trace = dir_.file("trace.json");
  const ProcessResult e = run_gpuscope({"export", "--perfetto", trace, db});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  const std::string text = read_file(trace);
  EXPECT_EQ(text.find("inf"), std::string::npos);
  const json parsed = json::parse(text);
  bool saw_null = false;
  for (const json& event : parsed["traceEvents"]) {
    if (event["ph"] != "C") continue;
    for (const auto& [key, value] : event["args"].items()) saw_null |= value.is_null();
  }
  EXPECT_TRUE(saw_null) << "an infinite sample must be written as null";

  const ProcessResult a = run_gpuscope({"analyze", "--json", "-a", "all", db});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_TRUE(json::accept(a.out)) << a.out.substr(0, 2000);
}

}  // namespace
}  // namespace gpuscope::testing
