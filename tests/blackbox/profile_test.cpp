// `gpuscope profile` through the binary: exit status, signals, time limits, the run database,
// GPU selection, output naming, crash safety. Simulated GPUs; real SQLite files.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support/process.hpp"
#include "support/sql.hpp"

namespace gpuscope::testing {
namespace {

class Profile : public ::testing::Test {
 protected:
  TempDir dir_;
  std::string db_ = dir_.file("run.db");
  std::map<std::string, std::string> env_{{"GPUSCOPE_SIM_STATE", dir_.file("state.json")},
                                          {"CUDA_VISIBLE_DEVICES", "\x01"},
                                          {"SLURM_JOB_ID", "\x01"}};

  ProcessResult profile(std::vector<std::string> options, std::vector<std::string> command,
                        const std::string& scenario = "h100") {
    std::vector<std::string> args{"profile", "--simulate", scenario, "-q", "-o", db_};
    args.insert(args.end(), options.begin(), options.end());
    args.push_back("--");
    args.insert(args.end(), command.begin(), command.end());
    return run_gpuscope(args, env_);
  }
};

TEST_F(Profile, ExitCodeZeroAndADatabase) {
  auto r = profile({"-s", "50"}, {"sleep", "0.5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(scalar(db_, "SELECT status FROM runs"), "finished");
  EXPECT_EQ(scalar(db_, "SELECT exit_code FROM runs"), "0");
  EXPECT_EQ(scalar(db_, "SELECT command_line FROM runs"), "sleep 0.5");
  EXPECT_GE(number(db_, "SELECT count(*) FROM samples"), 5);
  EXPECT_EQ(number(db_, "SELECT count(*) FROM devices"), 1);
  EXPECT_EQ(scalar(db_, "SELECT name FROM devices"), "NVIDIA H100 80GB HBM3");
  EXPECT_GT(number(db_, "SELECT count(*) FROM metrics"), 30);
  EXPECT_NE(r.err.find("job exited with code 0"), std::string::npos) << r.err;
}

TEST_F(Profile, ExitCodeIsPassedThrough) {
  auto r = profile({}, {"sh", "-c", "exit 3"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(scalar(db_, "SELECT exit_code FROM runs"), "3");
}

TEST_F(Profile, KilledJobExitsWith128PlusSignal) {
  auto r = profile({}, {"sh", "-c", "kill -KILL $$"});
  EXPECT_EQ(r.exit_code, 137) << r.err;
  EXPECT_EQ(scalar(db_, "SELECT status FROM runs"), "signaled");
  EXPECT_EQ(scalar(db_, "SELECT term_signal FROM runs"), "9");
}

TEST_F(Profile, CommandNotFoundIs127) {
  auto r = profile({}, {"gpuscope-no-such-command"});
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.err.find("gpuscope-no-such-command"), std::string::npos) << r.err;
  EXPECT_EQ(scalar(db_, "SELECT status FROM runs"), "not_started");
}

TEST_F(Profile, NotExecutableIs126) {
  const std::string script = dir_.file("script.sh");
  std::ofstream(script) << "#!/bin/sh\nexit 0\n";
  chmod(script.c_str(), 0644);
  auto r = profile({}, {script});
  EXPECT_EQ(r.exit_code, 126) << r.err;
}

TEST_F(Profile, WrapRunsAShellStringAndCapturesOutput) {
  auto r = run_gpuscope({"profile", "--simulate", "h100", "-q", "-o", db_, "--capture-output",
                         "--wrap", "echo hello; echo oops >&2; exit 4"},
                        env_);
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.out.find("hello"), std::string::npos);  // still passed through
  EXPECT_NE(r.err.find("oops"), std::string::npos);
  EXPECT_EQ(scalar(db_, "SELECT line FROM output WHERE stream = 'stdout'"), "hello");
  EXPECT_EQ(scalar(db_, "SELECT line FROM output WHERE stream = 'stderr'"), "oops");
}

TEST_F(Profile, SignalsAreForwardedToTheJob) {
  const std::string ready = dir_.file("ready");
  auto gpuscope = start_gpuscope(
      {"profile", "--simulate", "h100", "-q", "-o", db_, "--wrap",
       "trap 'echo got-usr1; exit 7' USR1; touch " + ready + "; while true; do sleep 0.05; done"},
      env_, dir_.file("out"), dir_.file("err"));
  ASSERT_TRUE(BackgroundProcess::wait_for_file(ready, 10000)) << read_file(dir_.file("err"));
  gpuscope->signal(SIGUSR1);
  EXPECT_EQ(gpuscope->wait(), 7) << read_file(dir_.file("err"));
  EXPECT_NE(read_file(dir_.file("out")).find("got-usr1"), std::string::npos);
  EXPECT_GE(number(db_, "SELECT count(*) FROM events WHERE kind = 'signal'"), 1);
}

TEST_F(Profile, SigtermToGpuscopeEndsTheJobAndKeepsTheData) {
  const std::string ready = dir_.file("ready");
  auto gpuscope = start_gpuscope({"profile", "--simulate", "h100", "-q", "-o", db_, "--wrap",
                                  "touch " + ready + "; exec sleep 30"},
                                 env_, dir_.file("out"), dir_.file("err"));
  ASSERT_TRUE(BackgroundProcess::wait_for_file(ready, 10000));
  gpuscope->signal(SIGTERM);
  EXPECT_EQ(gpuscope->wait(), 143);
  EXPECT_EQ(scalar(db_, "SELECT status FROM runs"), "signaled");
  EXPECT_GE(number(db_, "SELECT count(*) FROM samples"), 1);
}

TEST_F(Profile, MaxRuntimeStopsTheJob) {
  auto r = profile({"-m", "0.5", "--kill-grace", "1"}, {"sleep", "30"});
  EXPECT_EQ(r.exit_code, 143) << r.err;
  EXPECT_EQ(scalar(db_, "SELECT status FROM runs"), "timed_out");
  EXPECT_GE(number(db_, "SELECT count(*) FROM events WHERE kind LIKE 'max_runtime%'"), 1);
}

TEST_F(Profile, MultiGpuRunSamplesEveryGpu) {
  auto r = profile({"-s", "50"}, {"sleep", "0.5"}, "h100x4-straggler");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(number(db_, "SELECT count(DISTINCT device_index) FROM samples"), 4);
  EXPECT_EQ(number(db_, "SELECT count(*) FROM devices"), 4);
}

TEST_F(Profile, TimestampsAreRealAndIncreasing) {
  auto r = profile({"-s", "50"}, {"sleep", "0.6"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Consecutive samples of a device: strictly increasing, about 50 ms apart on the clock.
  EXPECT_EQ(number(db_,
                   "SELECT count(*) FROM samples a JOIN samples b ON b.rowid = a.rowid + 1 "
                   "AND b.device_index = a.device_index WHERE b.mono_ns <= a.mono_ns"),
            0);
  const double start = number(db_, "SELECT start_wall_ns FROM runs");
  EXPECT_GE(number(db_, "SELECT min(wall_ns) FROM samples"), start - 1e9);
}

TEST_F(Profile, CudaVisibleDevicesSelectsGpus) {
  env_["CUDA_VISIBLE_DEVICES"] = "1,3";
  auto r = profile({}, {"true"}, "h100x4-straggler");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = query(db_, "SELECT DISTINCT device_index FROM samples ORDER BY 1");
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0][0], "1");
  EXPECT_EQ(rows[1][0], "3");
}

TEST_F(Profile, CudaVisibleDevicesByUuid) {
  auto devices = run_gpuscope({"devices", "--simulate", "h100x4-straggler", "--json"});
  const auto uuid_pos = devices.out.find("GPU-", devices.out.find("\"index\": 2"));
  const std::string uuid = devices.out.substr(uuid_pos, 40);
  env_["CUDA_VISIBLE_DEVICES"] = uuid;
  auto r = profile({}, {"true"}, "h100x4-straggler");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(scalar(db_, "SELECT group_concat(DISTINCT device_index) FROM samples"), "2");
}

TEST_F(Profile, CudaVisibleDevicesByMigUuidSamplesTheParentGpu) {
  const std::string scenario = std::string(GPUSCOPE_TEST_FIXTURE_SCENARIO_DIR) + "/h100x2-mig.json";
  const std::string mig = "MIG-c09f7a3e-6d25-5b81-9f4c-0a8e3d7b2c56";  // GPU 1's first
  env_["CUDA_VISIBLE_DEVICES"] = mig;
  auto r = profile({}, {"true"}, scenario);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(scalar(db_, "SELECT group_concat(DISTINCT device_index) FROM samples"), "1");
  EXPECT_NE(r.err.find(mig + " is a MIG instance of GPU 1"), std::string::npos) << r.err;
}

TEST_F(Profile, UnknownMigUuidFailsBeforeTheJob) {
  const std::string scenario = std::string(GPUSCOPE_TEST_FIXTURE_SCENARIO_DIR) + "/h100x2-mig.json";
  const std::string marker = dir_.file("ran");
  env_["CUDA_VISIBLE_DEVICES"] = "MIG-00000000-0000-0000-0000-000000000000";
  auto r = profile({}, {"touch", marker}, scenario);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("no GPU has the MIG device MIG-00000000"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST_F(Profile, GpusOptionNamingAMissingGpuFailsBeforeTheJob) {
  const std::string marker = dir_.file("ran");
  auto r = profile({"--gpus", "7"}, {"touch", marker}, "h100x4-straggler");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("GPU 7 does not exist"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST_F(Profile, MissingMetricsAreNullNotZero) {
  auto r = profile({"-s", "50"}, {"sleep", "0.4"}, "a100-nogpm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(number(db_, "SELECT count(*) FROM samples WHERE sm_active_pct IS NOT NULL"), 0);
  EXPECT_GT(number(db_, "SELECT count(*) FROM samples WHERE gpu_util_pct IS NOT NULL"), 0);
  EXPECT_NE(r.err.find("no GPM on this GPU"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("will be empty"), std::string::npos) << r.err;
}

TEST_F(Profile, FastPowerSampling) {
  auto r = profile({"-s", "100", "--power-sampling-ms", "10"}, {"sleep", "0.6"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(number(db_, "SELECT count(*) FROM power_samples"),
            2 * number(db_, "SELECT count(*) FROM samples"));
}

TEST_F(Profile, AnEnergyCounterIntervalReadsTheCounterLessOftenAndKeepsItsEnergy) {
  // Samples every 50 ms, the counter every 500 ms (docs/nvml.md, "What the calls cost"): most
  // samples carry no counter, a few do, and the analysis still takes the run's energy from it.
  auto r = profile({"-s", "50", "--energy-counter-ms", "500"}, {"sleep", "1.6"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto all = number(db_, "SELECT count(*) FROM samples");
  const auto read = number(db_, "SELECT count(*) FROM samples WHERE energy_mj IS NOT NULL");
  EXPECT_GE(all, 25);
  EXPECT_GE(read, 3);
  EXPECT_LE(read, 6);  // 0, 500, 1000, 1500 ms and the stop, give or take a start's slack
  EXPECT_EQ(number(db_, "SELECT count(*) FROM samples WHERE power_w IS NULL"), 0);
  const auto analyzed = run_gpuscope({"analyze", db_}, env_);
  ASSERT_EQ(analyzed.exit_code, 0) << analyzed.err;
  EXPECT_NE(analyzed.out.find("energy (hardware counter)"), std::string::npos) << analyzed.out;
  // Faster than any cadence: refused, with what to do.
  auto refused = profile({"-s", "100", "--energy-counter-ms", "20"}, {"true"});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("--energy-counter-ms 20 is faster than any sampling cadence"),
            std::string::npos)
      << refused.err;
}

TEST_F(Profile, GpuLostMidRunIsRecordedAndTheJobGoesOn) {
  env_["GPUSCOPE_SIM_TIME_SCALE"] = "20";  // GPU 1 is lost 8 scenario seconds in: 0.4 s
  auto r = profile({"-s", "50"}, {"sleep", "1"}, "h100x2-gpu-lost");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(number(db_, "SELECT count(*) FROM events WHERE kind = 'gpu_lost' AND device_index = 1"),
            1);
  EXPECT_GT(number(db_, "SELECT count(*) FROM samples WHERE device_index = 0"),
            number(db_, "SELECT count(*) FROM samples WHERE device_index = 1"));
  EXPECT_NE(r.err.find("fell off the bus"), std::string::npos) << r.err;
  // The run's problems and the end summary say so too (docs/cli.md), not only the live line.
  EXPECT_EQ(number(db_, "SELECT count(*) FROM runs WHERE problems LIKE '%GPU 1 fell off the bus%'"),
            1);
  EXPECT_NE(r.err.find("warning: GPU 1 fell off the bus during the run"), std::string::npos)
      << r.err;
}

TEST_F(Profile, Kill9OfGpuscopeLeavesAReadableDatabase) {
  const std::string ready = dir_.file("ready");
  const std::string job_pid = dir_.file("job.pid");
  auto gpuscope =
      start_gpuscope({"profile", "--simulate", "h100", "-q", "-s", "50", "-o", db_, "--wrap",
                      "echo $$ > " + job_pid + "; touch " + ready + "; exec sleep 30"},
                     env_, dir_.file("out"), dir_.file("err"));
  ASSERT_TRUE(BackgroundProcess::wait_for_file(ready, 10000));
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  const auto killed_at = std::chrono::system_clock::now();
  gpuscope->signal(SIGKILL);
  gpuscope->wait();
  // The job lives on in its own process group, as it should; end it here.
  kill(std::stoi(read_file(job_pid)), SIGKILL);
  EXPECT_EQ(scalar(db_, "SELECT status FROM runs"), "running");
  const double last_ns = number(db_, "SELECT max(wall_ns) FROM samples");
  const double killed_ns = static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(killed_at.time_since_epoch()).count());
  // At most about one flush interval (1 s) lost; allow scheduling slack.
  EXPECT_GT(last_ns, killed_ns - 1.8e9);
  EXPECT_GE(number(db_, "SELECT count(*) FROM samples"), 15);
}

TEST_F(Profile, SlurmFieldsAndPerRankFileName) {
  env_["SLURM_JOB_ID"] = "4242";
  env_["SLURM_STEP_ID"] = "1";
  env_["SLURM_PROCID"] = "2";
  env_["SLURM_LOCALID"] = "0";
  env_["SLURM_NODEID"] = "1";
  env_["SLURMD_NODENAME"] = "nid0007";
  env_["SLURM_NTASKS"] = "4";
  const std::string out_dir = dir_.file("out") + "/";
  auto r = run_gpuscope({"profile", "--simulate", "h100", "-q", "-o", out_dir, "--", "true"}, env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string file = out_dir + "nid0007.rank2.db";
  ASSERT_TRUE(std::filesystem::exists(file)) << r.err;
  EXPECT_EQ(scalar(file, "SELECT slurm_job_id FROM runs"), "4242");
  EXPECT_EQ(scalar(file, "SELECT slurm_step_id FROM runs"), "1");
  EXPECT_EQ(scalar(file, "SELECT slurm_rank FROM runs"), "2");
  EXPECT_EQ(scalar(file, "SELECT slurm_node_name FROM runs"), "nid0007");
  EXPECT_EQ(scalar(file, "SELECT slurm_ntasks FROM runs"), "4");
}

TEST_F(Profile, MergeCombinesRuns) {
  ASSERT_EQ(profile({}, {"true"}).exit_code, 0);
  const std::string second = dir_.file("second.db");
  ASSERT_EQ(
      run_gpuscope({"profile", "--simulate", "h100x4-straggler", "-q", "-o", second, "--", "true"},
                   env_)
          .exit_code,
      0);
  const std::string merged = dir_.file("merged.db");
  auto r = run_gpuscope({"merge", merged, db_, second});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(number(merged, "SELECT count(*) FROM runs"), 2);
  EXPECT_EQ(number(merged, "SELECT count(*) FROM devices"), 5);
  EXPECT_EQ(
      number(merged, "SELECT count(*) FROM samples"),
      number(db_, "SELECT count(*) FROM samples") + number(second, "SELECT count(*) FROM samples"));
}

TEST_F(Profile, VerbosePrintsSamples) {
  auto r = profile({"-v", "-s", "100"}, {"sleep", "0.3"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("GPU 0  power_w"), std::string::npos) << r.err;
}

// Bad input: one clear line, exit code 2, before the job starts.
TEST_F(Profile, NoCommandIsAUsageError) {
  auto r = run_gpuscope({"profile", "--simulate", "h100", "-o", db_}, env_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no command to profile"), std::string::npos) << r.err;
}

TEST_F(Profile, ExistingOutputIsKeptWithoutForce) {
  std::ofstream(db_) << "precious";
  const std::string marker = dir_.file("ran");
  auto r = profile({}, {"touch", marker});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("-f/--force-overwrite"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(db_), "precious");
  EXPECT_FALSE(std::filesystem::exists(marker));
  EXPECT_EQ(profile({"-f"}, {"true"}).exit_code, 0);
  EXPECT_EQ(scalar(db_, "SELECT status FROM runs"), "finished");
}

TEST_F(Profile, SamplingBelowTheFloorIsRefused) {
  auto r = profile({"-s", "1"}, {"true"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--sampling-ms 1 is not a number between 10 and"), std::string::npos)
      << r.err;
}

TEST_F(Profile, UnwritableOutputIsAUsageError) {
  db_ = "/proc/gpuscope-test/run.db";
  auto r = profile({}, {"true"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("gpuscope: error:"), std::string::npos) << r.err;
}

TEST_F(Profile, UnknownOptionIsAUsageError) {
  auto r = profile({"--frobnicate"}, {"true"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--frobnicate"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gpuscope::testing
