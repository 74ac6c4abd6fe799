// The launcher as a separate process (launch_test_driver), the way gpuscope runs it: signals
// sent to it reach the job's whole process group and it exits with the job's status.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <thread>

#include "launch/signals.hpp"
#include "launch_test_util.hpp"
#include "support/process.hpp"

namespace gpuscope::launch {
namespace {

using test::read_file;
using test::wait_for_file;

const std::string kDriver = GPUSCOPE_LAUNCH_TEST_DRIVER;
// Sleeps in the foreground until a signal ends it; exits 99 after about a minute, so a signal
// that never arrives fails the test instead of hanging it.
const std::string kWaitForSignal =
    "i=0; while [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; exit 99";

std::vector<std::string> driver(std::vector<std::string> options, const std::string& script) {
  std::vector<std::string> argv{kDriver};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.insert(argv.end(), {"--", "/bin/sh", "-c", script});
  return argv;
}

// Runs the driver in the background; the test signals it once the job is ready.
class BackgroundDriver {
 public:
  explicit BackgroundDriver(std::vector<std::string> argv)
      : thread_([this, argv = std::move(argv)] { result_ = testing::run_process(argv); }) {}
  testing::ProcessResult finish() {
    thread_.join();
    return result_;
  }

 private:
  testing::ProcessResult result_;
  std::thread thread_;
};

pid_t read_pid(const std::string& path) {
  pid_t pid = 0;
  std::ifstream(path) >> pid;
  return pid;
}

TEST(LaunchDriver, ExitsWithTheJobsStatus) {
  EXPECT_EQ(testing::run_process(driver({}, "exit 3")).exit_code, 3);
  EXPECT_EQ(testing::run_process(driver({}, "kill -KILL $$")).exit_code, 137);
  const auto missing = testing::run_process({kDriver, "--", "gpuscope-no-such-command"});
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_EQ(missing.err, "not started: command not found: gpuscope-no-such-command\n");
}

class SignalForwarding : public ::testing::TestWithParam<int> {};

TEST_P(SignalForwarding, ReachesTheJobAndTheDriverExitsWithItsStatus) {
  const int signal_number = GetParam();
  const std::string name = signal_name(signal_number);
  testing::TempDir dir;
  // The trap runs once the sleep in the foreground ends; the sleep gets the signal too, as a
  // member of the job's process group.
  const std::string script = "trap 'echo got > " + dir.file("marker") + "; exit 7' " +
                             name.substr(3) + "; touch " + dir.file("ready") + "; " +
                             kWaitForSignal;
  BackgroundDriver running(
      driver({"--pid-file", dir.file("pid"), "--events", dir.file("events")}, script));
  ASSERT_TRUE(wait_for_file(dir.file("ready")));
  ASSERT_EQ(::kill(read_pid(dir.file("pid")), signal_number), 0);
  const auto result = running.finish();

  EXPECT_EQ(result.exit_code, 7);  // the driver survived the signal and reported the job's code
  EXPECT_EQ(read_file(dir.file("marker")), "got\n");
  EXPECT_NE(read_file(dir.file("events")).find("signal: " + name + " forwarded to the job"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(ForwardedSignals, SignalForwarding,
                         ::testing::Values(SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2),
                         [](const ::testing::TestParamInfo<int>& param) {
                           return signal_name(param.param).substr(3);
                         });

TEST(LaunchDriver, SignalReachesTheJobsWholeProcessGroup) {
  testing::TempDir dir;
  // The grandchild runs in the background of the job's shell, so only a signal sent to the
  // process group reaches it; the job's shell itself dies of the SIGTERM.
  test::write_file(dir.file("grandchild.sh"),
                   "trap 'touch " + dir.file("grandchild") + "; exit 0' TERM; touch " +
                       dir.file("ready") + "; " + kWaitForSignal + "\n",
                   0644);
  BackgroundDriver running(
      driver({"--pid-file", dir.file("pid")}, "/bin/sh " + dir.file("grandchild.sh") + " & wait"));
  ASSERT_TRUE(wait_for_file(dir.file("ready")));
  ASSERT_EQ(::kill(read_pid(dir.file("pid")), SIGTERM), 0);
  EXPECT_EQ(running.finish().exit_code, 143);
  EXPECT_TRUE(wait_for_file(dir.file("grandchild")));
}

TEST(LaunchDriver, CapturedOutputPassesThroughByteForByte) {
  testing::TempDir dir;
  const auto result = testing::run_process(
      driver({"--capture", "--lines", dir.file("lines")},
             "printf 'a\\nb\\n'; printf 'e1\\n' >&2; printf '\\001\\377tail'; exit 4"));
  EXPECT_EQ(result.exit_code, 4);
  EXPECT_EQ(result.out, "a\nb\n\x01\xfftail");
  EXPECT_EQ(result.err, "e1\n");
  const std::string lines = read_file(dir.file("lines"));
  EXPECT_NE(lines.find("out|a\nout|b\n"), std::string::npos);
  EXPECT_NE(lines.find("out|\x01\xfftail\n"), std::string::npos);
  EXPECT_NE(lines.find("err|e1\n"), std::string::npos);
}

TEST(LaunchDriver, MaxRuntimeEndsTheJobTree) {
  testing::TempDir dir;
  const auto result = testing::run_process(
      driver({"--max-runtime-ms", "200", "--events", dir.file("events")}, "sleep 30; exit 0"));
  EXPECT_EQ(result.exit_code, 143);
  EXPECT_NE(read_file(dir.file("events")).find("max_runtime: max runtime of 200 ms reached"),
            std::string::npos);
}

}  // namespace
}  // namespace gpuscope::launch
