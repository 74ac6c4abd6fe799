// --max-runtime: SIGTERM at the limit, SIGKILL after the grace; and the tick cadence.
#include <gtest/gtest.h>
#include <signal.h>

#include "launch/job.hpp"
#include "launch_test_util.hpp"

namespace gpuscope::launch {
namespace {

using namespace std::chrono_literals;
using test::has_event;
using test::JobTest;

class JobLimits : public JobTest {
 protected:
  JobResult run(LaunchOptions options) {
    options.job_control = false;
    JobCallbacks callbacks;
    callbacks.on_event = [this](const Event& event) { events_.push_back(event); };
    return run_job(options, callbacks);
  }
  std::vector<Event> events_;
};

TEST_F(JobLimits, MaxRuntimeEndsTheJobWithSigterm) {
  LaunchOptions options;
  options.argv = {"sleep", "30"};
  options.max_runtime = 300ms;
  const JobResult result = run(options);
  EXPECT_EQ(result.status, RunStatus::TimedOut);
  EXPECT_EQ(result.term_signal, SIGTERM);
  EXPECT_EQ(result.exit_code, 143);
  EXPECT_TRUE(has_event(events_, "max_runtime", "max runtime of 300 ms reached: SIGTERM sent"));
  EXPECT_FALSE(has_event(events_, "max_runtime", "SIGKILL"));
  EXPECT_EQ(describe_exit(result), "stopped at the max runtime: killed by SIGTERM (exit code 143)");
}

TEST_F(JobLimits, JobIgnoringSigtermGetsSigkillAfterTheGrace) {
  // The job inherits an ignored SIGTERM (as under nohup-like wrappers), so it cannot race the
  // limit by setting up its own trap late.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction previous {};
  sigaction(SIGTERM, &ignore, &previous);
  LaunchOptions options;
  options.argv = {"sleep", "30"};
  options.max_runtime = 200ms;
  options.kill_grace = 300ms;
  const JobResult result = run(options);
  sigaction(SIGTERM, &previous, nullptr);

  EXPECT_EQ(result.status, RunStatus::TimedOut);
  EXPECT_EQ(result.term_signal, SIGKILL);
  EXPECT_EQ(result.exit_code, 137);
  EXPECT_TRUE(has_event(events_, "max_runtime", "SIGTERM sent"));
  EXPECT_TRUE(
      has_event(events_, "max_runtime", "still running 300 ms after SIGTERM: SIGKILL sent"));
}

TEST_F(JobLimits, JobEndingBeforeTheLimitIsFinished) {
  LaunchOptions options;
  options.argv = {"sh", "-c", "exit 2"};
  options.max_runtime = 60s;
  const JobResult result = run(options);
  EXPECT_EQ(result.status, RunStatus::Finished);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_FALSE(has_event(events_, "max_runtime", ""));
}

TEST_F(JobLimits, TickIsCalledWhileTheJobRuns) {
  LaunchOptions options;
  options.argv = {"sleep", "1"};
  options.job_control = false;
  int ticks = 0;
  JobCallbacks callbacks;
  callbacks.on_tick = [&] { ++ticks; };
  callbacks.tick_interval = 10ms;
  EXPECT_EQ(run_job(options, callbacks).exit_code, 0);
  EXPECT_GE(ticks, 1);
}

}  // namespace
}  // namespace gpuscope::launch
