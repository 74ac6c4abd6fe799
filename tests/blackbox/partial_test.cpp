// The distributed analysis through the binary (docs/analysis.md "A job of thousands of GPUs"):
// tasks started together, meeting in a directory, print on task 0 exactly what one `analyze` of
// the same files prints, for random task counts, with phases, MIG instances and DCGM sources in
// the files; and what goes wrong: a task that never comes, a task that failed, a damaged part,
// another analysis' files, an earlier run's failures, a FIFO or a link under a task's file
// name, bad task numbers.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "support/process.hpp"

namespace gpuscope::testing {
namespace {

class Distributed : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    runs_ = new TempDir();
    const std::map<std::string, std::string> env{{"GPUSCOPE_SIM_STATE", runs_->file("state.json")},
                                                 {"CUDA_VISIBLE_DEVICES", "\x01"},
                                                 {"SLURM_JOB_ID", "\x01"},
                                                 {"GPUSCOPE_SIM_TIME_SCALE", "10"}};
    // Four "ranks" of different shapes: stragglers, an idle start, DCGM's saturation fields,
    // MIG instances; one with phases from its output.
    const std::vector<std::vector<std::string>> ranks{
        {"h100x4-straggler", "--phase", "step=step", "--", "sh", "-c",
         "sleep 0.5; echo step; sleep 0.8; echo step; sleep 0.5"},
        {"h100x8-idle-start", "--", "sleep", "2.5"},
        {"a100-dcgm", "--", "sleep", "1.5"},
        {"h100x8-mig7", "--", "sleep", "1"}};
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      std::vector<std::string> args{
          "profile",   "--simulate",
          ranks[r][0], "-q",
          "-s",        "50",
          "-o",        runs_->file("runs/rank" + std::to_string(r) + ".db")};
      args.insert(args.end(), ranks[r].begin() + 1, ranks[r].end());
      const auto result = run_gpuscope(args, env);
      ASSERT_EQ(result.exit_code, 0) << result.err;
    }
  }
  static void TearDownTestSuite() {
    delete runs_;
    runs_ = nullptr;
  }

  static std::string runs() { return runs_->file("runs"); }

  // Runs `tasks` tasks of `args` at once (each with --task r/N and --partial `parts`); returns
  // each task's result.
  std::vector<ProcessResult> distributed(unsigned tasks, const std::string& parts,
                                         std::vector<std::string> args) {
    std::vector<std::unique_ptr<BackgroundProcess>> running;
    for (unsigned r = 0; r < tasks; ++r) {
      std::vector<std::string> task = args;
      task.insert(task.end(), {"--partial", parts, "--task", fmt(r, tasks)});
      running.push_back(start_gpuscope(task, {}, out(r), err(r)));
    }
    std::vector<ProcessResult> results(tasks);
    for (unsigned r = 0; r < tasks; ++r) {
      results[r].exit_code = running[r]->wait();
      results[r].out = read_file(out(r));
      results[r].err = read_file(err(r));
    }
    return results;
  }

  static std::string fmt(unsigned r, unsigned n) {
    return std::to_string(r) + "/" + std::to_string(n);
  }
  std::string out(unsigned r) { return dir_.file("out" + std::to_string(r)); }
  std::string err(unsigned r) { return dir_.file("err" + std::to_string(r)); }

  static TempDir* runs_;
  TempDir dir_;
};

TempDir* Distributed::runs_ = nullptr;

TEST_F(Distributed, RandomTaskCountsPrintWhatOneAnalyzePrints) {
  const ProcessResult one = run_gpuscope({"analyze", "--json", "-d", "all", runs()});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_NE(one.out.find("\"phases\""), std::string::npos);
  std::mt19937 random(20261126);
  for (int round = 0; round < 4; ++round) {
    const auto tasks =
        static_cast<unsigned>(1 + random() % 6);  // more tasks than files too: some read nothing
    const auto results = distributed(tasks, dir_.file("parts" + std::to_string(round)),
                                     {"analyze", "--json", "-d", "all", runs()});
    for (unsigned r = 0; r < tasks; ++r) {
      ASSERT_EQ(results[r].exit_code, 0)
          << "task " << r << " of " << tasks << ": " << results[r].err;
      if (r > 0) {
        EXPECT_EQ(results[r].out, "") << "task " << r << " printed";
      }
    }
    EXPECT_TRUE(results[0].out == one.out) << tasks << " tasks: the JSON differs";
  }
  // The text view too, and the same directory used again for the same analysis.
  const ProcessResult text = run_gpuscope({"analyze", "-a", "all", runs()});
  for (int again = 0; again < 2; ++again) {
    const auto results = distributed(3, dir_.file("parts-text"), {"analyze", "-a", "all", runs()});
    ASSERT_EQ(results[0].exit_code, 0) << results[0].err;
    EXPECT_EQ(results[0].out, text.out);
  }
}

TEST_F(Distributed, ATaskThatNeverComesIsNamedAfterTheTimeout) {
  const ProcessResult r = run_gpuscope({"analyze", runs(), "--partial", dir_.file("parts"),
                                        "--task", "0/3", "--partial-timeout", "1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no activity from task 1 of 3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("that task was not started"), std::string::npos) << r.err;
  // It told the others it failed, in the directory.
  EXPECT_TRUE(std::filesystem::exists(dir_.file("parts/failed-0-of-3.txt")));
}

TEST_F(Distributed, AFailedTaskStopsTheOthersOfItsLaunchWithItsReason) {
  const std::string parts = dir_.file("parts");
  auto slurm = [](const std::string& rank, const std::string& step) {
    return std::map<std::string, std::string>{{"SLURM_PROCID", rank},
                                              {"SLURM_NTASKS", "2"},
                                              {"SLURM_JOB_ID", "41"},
                                              {"SLURM_STEP_ID", step}};
  };
  // Task 1 of srun step 41.0 fails (task 0 never came); task 0 of the same step stops with its
  // reason at once.
  const ProcessResult one = run_gpuscope(
      {"analyze", runs(), "--partial", parts, "--partial-timeout", "1"}, slurm("1", "0"));
  ASSERT_EQ(one.exit_code, 1) << one.err;
  const ProcessResult zero = run_gpuscope(
      {"analyze", runs(), "--partial", parts, "--partial-timeout", "60"}, slurm("0", "0"));
  EXPECT_EQ(zero.exit_code, 1);
  EXPECT_NE(zero.err.find("task 1 of 2 of the distributed analysis failed (on "), std::string::npos)
      << zero.err;
  EXPECT_NE(zero.err.find(": no context from task 0 of 2 in "), std::string::npos) << zero.err;
  // Task 0 of the next step (41.1) does not believe step 41.0's failure: it waits for task 1.
  const ProcessResult next = run_gpuscope(
      {"analyze", runs(), "--partial", parts, "--partial-timeout", "1"}, slurm("0", "1"));
  EXPECT_EQ(next.exit_code, 1);
  EXPECT_NE(next.err.find("no activity from task 1 of 2"), std::string::npos) << next.err;
  EXPECT_NE(next.err.find("failed-1-of-2.txt is an earlier run's or another analysis' (not "
                          "believed)"),
            std::string::npos)
      << next.err;
}

TEST_F(Distributed, AFailureFileWithoutThisAnalysisFingerprintIsNotBelieved) {
  // What an older gpuscope wrote (the message alone), or anyone: never taken for this run's.
  std::filesystem::create_directories(dir_.file("parts"));
  std::ofstream(dir_.file("parts/failed-1-of-2.txt"))
      << "on n2: cannot read rank3.db (I/O error)\n";
  const ProcessResult r = run_gpuscope({"analyze", runs(), "--partial", dir_.file("parts"),
                                        "--task", "0/2", "--partial-timeout", "1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.find("I/O error"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no activity from task 1 of 2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(not believed)"), std::string::npos) << r.err;
}

TEST_F(Distributed, AnEarlierRunsFailureDoesNotFailAStaggeredRun) {
  const ProcessResult one = run_gpuscope({"analyze", "--json", runs()});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  // An earlier run with --task: task `alone` came alone and failed (the other never came).
  // Then the same analysis again, task `alone` started 0.3 s after the other: the other must
  // not stop on the earlier run's failure file, which names it as the cause.
  for (const unsigned alone : {1U, 0U}) {
    const std::string parts = dir_.file("parts" + std::to_string(alone));
    const ProcessResult earlier = run_gpuscope({"analyze", "--json", runs(), "--partial", parts,
                                                "--task", fmt(alone, 2), "--partial-timeout", "1"});
    ASSERT_EQ(earlier.exit_code, 1) << earlier.err;
    ASSERT_TRUE(std::filesystem::exists(parts + "/failed-" + std::to_string(alone) + "-of-2.txt"));
    const unsigned first = 1 - alone;
    auto task = [&](unsigned r) {
      return start_gpuscope({"analyze", "--json", runs(), "--partial", parts, "--task", fmt(r, 2)},
                            {}, out(r), err(r));
    };
    auto started_first = task(first);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto started_second = task(alone);
    EXPECT_EQ(started_first->wait(), 0) << "task " << first << ": " << read_file(err(first));
    EXPECT_EQ(started_second->wait(), 0) << "task " << alone << ": " << read_file(err(alone));
    EXPECT_TRUE(read_file(out(0)) == one.out) << "task 0 printed another analysis";
  }
}

TEST_F(Distributed, AFifoOrALinkUnderATasksNameIsRefusedNotWaitedOn) {
  // A FIFO would block the open for ever, past --partial-timeout: refused at once instead.
  struct Case {
    std::string name;
    bool fifo;
    std::string message;
  };
  const std::vector<Case> cases{
      {"activity-1-of-2.bin", true, "activity-1-of-2.bin is a FIFO, not a regular file"},
      {"failed-1-of-2.txt", true, "failed-1-of-2.txt is a FIFO, not a regular file"},
      {"activity-1-of-2.bin", false, "activity-1-of-2.bin is a symbolic link, not a regular file"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string parts = dir_.file("parts" + std::to_string(i));
    std::filesystem::create_directories(parts);
    const std::string path = parts + "/" + cases[i].name;
    if (cases[i].fifo) {
      ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
    } else {
      std::filesystem::create_symlink("/dev/zero", path);
    }
    // `timeout` stands for the user's patience: a task that hangs is killed (137), not waited on.
    const ProcessResult r =
        run_process({"timeout", "-s", "KILL", "60", GPUSCOPE_TEST_BINARY, "analyze", runs(),
                     "--partial", parts, "--task", "0/2", "--partial-timeout", "30"});
    EXPECT_EQ(r.exit_code, 1) << cases[i].name << ": " << r.err;
    EXPECT_NE(r.err.find(cases[i].message), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("give --partial a directory of its own"), std::string::npos) << r.err;
  }
}

TEST_F(Distributed, ADamagedPartIsAnErrorNotAnotherResult) {
  const std::string parts = dir_.file("parts");
  auto results = distributed(2, parts, {"analyze", "--json", runs()});
  ASSERT_EQ(results[0].exit_code, 0) << results[0].err;
  // Cut task 1's part in half, then run task 0 alone: it reads what is there.
  const std::string part = parts + "/part-1-of-2.bin";
  const auto size = std::filesystem::file_size(part);
  std::filesystem::resize_file(part, size / 2);
  const ProcessResult r = run_gpuscope(
      {"analyze", "--json", runs(), "--partial", parts, "--task", "0/2", "--partial-timeout", "5"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("part-1-of-2.bin is damaged or cut off"), std::string::npos) << r.err;
}

TEST_F(Distributed, FilesOfAnotherAnalysisAreNeverRead) {
  const std::string parts = dir_.file("parts");
  auto results = distributed(2, parts, {"analyze", "--json", runs()});
  ASSERT_EQ(results[0].exit_code, 0) << results[0].err;
  // Other options: task 1's files are another analysis' and task 0 waits for its own.
  const ProcessResult r = run_gpuscope({"analyze", "--json", "-d", "none", runs(), "--partial",
                                        parts, "--task", "0/2", "--partial-timeout", "1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is from another analysis"), std::string::npos) << r.err;
}

TEST_F(Distributed, BadTaskNumbersAreUsageErrors) {
  const std::string parts = dir_.file("parts");
  struct Case {
    std::vector<std::string> args;
    std::map<std::string, std::string> env;
    std::string message;
  };
  const std::vector<Case> cases{
      {{"--partial", parts, "--task", "3/3"}, {}, "task 3 of 3 (--task) is not a task"},
      {{"--partial", parts, "--task", "x"}, {}, "--task x is not R/N"},
      {{"--partial", parts, "--task", "1/0"}, {}, "task 1 of 0 (--task) is not a task"},
      {{"--task", "0/2"}, {}, "--task goes with --partial DIR"},
      {{"--partial", parts},
       {{"SLURM_PROCID", "\x01"}, {"OMPI_COMM_WORLD_RANK", "\x01"}, {"PMI_RANK", "\x01"}},
       "--partial needs to know which task this is"},
      {{"--partial", parts},
       {{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "two"}},
       "SLURM_PROCID=2 and SLURM_NTASKS=two are not task numbers"},
      {{"--partial", "/proc/version/parts", "--task", "0/1"}, {}, "cannot use /proc/version/parts"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args{"analyze", runs()};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const ProcessResult r = run_gpuscope(args, c.env);
    EXPECT_EQ(r.exit_code, 2) << c.message << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
}

TEST_F(Distributed, LogsAreRefusedWithTheWayToConvertThem) {
  const std::string log = std::string(GPUSCOPE_TEST_FIXTURE_DIR) + "/logs/dcgmi-dmon-basic.txt";
  const ProcessResult r =
      run_gpuscope({"analyze", runs(), log, "--partial", dir_.file("parts"), "--task", "0/1"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--partial reads run databases, and an input is a log; convert the logs "
                       "once with gpuscope import"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace gpuscope::testing
