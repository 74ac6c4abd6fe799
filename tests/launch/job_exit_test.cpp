// How a job's end is reported: exit codes as a shell gives them, commands that cannot start,
// --wrap scripts, the environment, and events.
#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <cstdlib>
#include <stdexcept>

#include "core/error.hpp"
#include "launch/job.hpp"
#include "launch_test_util.hpp"
#include "support/process.hpp"

namespace gpuscope::launch {
namespace {

using test::has_event;
using test::has_problem;
using test::JobTest;
using test::read_file;
using test::write_file;

LaunchOptions command(std::vector<std::string> argv) {
  LaunchOptions options;
  options.argv = std::move(argv);
  options.job_control = false;  // a developer's terminal must not change what these assert
  return options;
}

class JobExit : public JobTest {};

TEST_F(JobExit, ZeroExitCodeIsFinished) {
  const JobResult result = run_job(command({"true"}), {});
  EXPECT_EQ(result.status, RunStatus::Finished);
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_FALSE(result.term_signal.has_value());
  EXPECT_GT(result.pid, 0);
  EXPECT_GE(result.end_mono_ns, result.start_mono_ns);
  EXPECT_EQ(describe_exit(result), "exited with code 0");
}

TEST_F(JobExit, NonZeroExitCodePassesThrough) {
  const JobResult result = run_job(command({"sh", "-c", "exit 3"}), {});
  EXPECT_EQ(result.status, RunStatus::Finished);
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(describe_exit(result), "exited with code 3");
}

TEST_F(JobExit, DeathBySignalIs128PlusTheSignal) {
  const JobResult result = run_job(command({"sh", "-c", "kill -KILL $$"}), {});
  EXPECT_EQ(result.status, RunStatus::Signaled);
  EXPECT_EQ(result.exit_code, 137);
  EXPECT_EQ(result.term_signal, SIGKILL);
  EXPECT_EQ(describe_exit(result), "killed by SIGKILL (exit code 137)");
}

TEST_F(JobExit, CommandNotFoundIs127AndNotStarted) {
  const auto job = Job::start(command({"gpuscope-no-such-command"}));
  ASSERT_FALSE(job.has_value());
  EXPECT_EQ(job.error().reason, SpawnFailure::Reason::NotFound);

  const JobResult result = run_job(command({"gpuscope-no-such-command", "arg"}), {});
  EXPECT_EQ(result.status, RunStatus::NotStarted);
  EXPECT_EQ(result.exit_code, 127);
  ASSERT_TRUE(result.spawn_failure.has_value());
  EXPECT_EQ(result.spawn_failure->error_number, ENOENT);
  EXPECT_EQ(describe_exit(result), "command not found: gpuscope-no-such-command");
}

TEST_F(JobExit, FileWithoutExecuteBitIs126) {
  testing::TempDir dir;
  write_file(dir.file("job.sh"), "#!/bin/sh\nexit 0\n", 0644);
  const JobResult result = run_job(command({dir.file("job.sh")}), {});
  EXPECT_EQ(result.status, RunStatus::NotStarted);
  EXPECT_EQ(result.exit_code, 126);
  ASSERT_TRUE(result.spawn_failure.has_value());
  EXPECT_EQ(result.spawn_failure->reason, SpawnFailure::Reason::NotExecutable);
  EXPECT_EQ(result.spawn_failure->error_number, EACCES);
  EXPECT_EQ(describe_exit(result), "cannot execute " + dir.file("job.sh") + " (Permission denied)");
}

TEST_F(JobExit, ExecutableThatExecveRejectsIs126) {
  testing::TempDir dir;
  write_file(dir.file("garbage"), std::string("\x01\x02\x03\x04", 4), 0755);
  write_file(dir.file("bad_interpreter"), "#!/gpuscope/no/such/interpreter\n", 0755);

  const JobResult garbage = run_job(command({dir.file("garbage")}), {});
  EXPECT_EQ(garbage.status, RunStatus::NotStarted);
  EXPECT_EQ(garbage.exit_code, 126);
  EXPECT_EQ(garbage.spawn_failure->error_number, ENOEXEC);

  const JobResult interpreter = run_job(command({dir.file("bad_interpreter")}), {});
  EXPECT_EQ(interpreter.exit_code, 126);
  EXPECT_NE(interpreter.spawn_failure->error_text.find("bad interpreter"), std::string::npos);
}

TEST_F(JobExit, WrappedScriptRunsWithPipesAndQuotes) {
  testing::TempDir dir;
  const std::string out = dir.file("out");
  const JobResult result =
      run_job(command(wrap_command("printf '%s\\n' \"a b\" 'c'\"'\"'d' | tr a-z A-Z > " + out +
                                   "; exit 5")),
              {});
  EXPECT_EQ(result.exit_code, 5);
  EXPECT_EQ(read_file(out), "A B\nC'D\n");
  EXPECT_EQ(wrap_command("x"), (std::vector<std::string>{"/bin/sh", "-c", "x"}));
}

TEST_F(JobExit, ExtraEnvironmentReachesOnlyTheJob) {
  LaunchOptions options = command(wrap_command("test \"$GPUSCOPE_LAUNCH_TEST\" = 'a b=c'"));
  options.extra_env["GPUSCOPE_LAUNCH_TEST"] = "a b=c";
  EXPECT_EQ(run_job(options, {}).exit_code, 0);
  EXPECT_EQ(std::getenv("GPUSCOPE_LAUNCH_TEST"), nullptr);

  options.extra_env["GPUSCOPE_LAUNCH_TEST"] = "other";
  EXPECT_EQ(run_job(options, {}).exit_code, 1);  // the assertion in the job can fail
}

TEST_F(JobExit, CommandIsLookedUpOnTheJobsPath) {
  testing::TempDir dir;
  write_file(dir.file("gpuscope-test-tool"), "#!/bin/sh\nexit 9\n", 0755);
  LaunchOptions options = command({"gpuscope-test-tool"});
  options.extra_env["PATH"] = dir.path() + ":/usr/bin:/bin";
  EXPECT_EQ(run_job(options, {}).exit_code, 9);
}

TEST_F(JobExit, ReportsStartAndExitEvents) {
  std::vector<Event> events;
  JobCallbacks callbacks;
  callbacks.on_event = [&](const Event& event) { events.push_back(event); };
  run_job(command({"sh", "-c", "exit 3"}), callbacks);
  ASSERT_GE(events.size(), 2U);
  EXPECT_EQ(events.front().kind.text(), "job_start");
  EXPECT_EQ(events.back().kind.text(), "job_exit");
  EXPECT_EQ(events.back().detail, "exited with code 3");
  EXPECT_LE(events.front().mono_ns, events.back().mono_ns);
}

TEST_F(JobExit, ThrowingCallbackIsReportedAndWaitingGoesOn) {
  JobCallbacks callbacks;
  int calls = 0;
  callbacks.on_event = [&](const Event&) {
    ++calls;
    throw std::runtime_error("database is locked");
  };
  const JobResult result = run_job(command({"sh", "-c", "exit 4"}), callbacks);
  EXPECT_EQ(result.exit_code, 4);
  EXPECT_EQ(calls, 1);  // disabled after the first failure
  EXPECT_TRUE(has_problem(result.problems, "event callback failed (database is locked)"));
}

TEST_F(JobExit, StoppedJobIsReportedAndWaitedFor) {
  auto job = Job::start(command({"sh", "-c", "kill -STOP $$; exit 4"}));
  ASSERT_TRUE(job.has_value());
  const pid_t pid = job->pid();
  std::vector<Event> events;
  JobCallbacks callbacks;
  callbacks.on_event = [&](const Event& event) {
    events.push_back(event);
    if (event.kind == EventKind::JobStop) ::kill(pid, SIGCONT);
  };
  const JobResult result = job->wait(callbacks);
  EXPECT_EQ(result.exit_code, 4);
  EXPECT_TRUE(has_event(events, "job_stop", "stopped by SIGSTOP"));
  // No assertion on job_continue: a job that exits right after SIGCONT is a zombie before the
  // loop looks, and the kernel reports nothing but the exit for a zombie.
}

TEST_F(JobExit, JobDroppedWithoutWaitIsKilledAndReaped) {
  pid_t pid = -1;
  {
    auto job = Job::start(command({"sleep", "30"}));
    ASSERT_TRUE(job.has_value());
    pid = job->pid();
    EXPECT_EQ(::kill(pid, 0), 0);
  }
  EXPECT_NE(::kill(pid, 0), 0);  // gone, not even a zombie
}

TEST(JobWithoutSignalGuard, RefusesToStart) {
  sigset_t set = launcher_signal_set();
  sigset_t previous;
  pthread_sigmask(SIG_UNBLOCK, &set, &previous);
  EXPECT_THROW(Job::start(command({"true"})), Error);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

}  // namespace
}  // namespace gpuscope::launch
