// Job control on a terminal: the driver runs as the session leader of a fresh pseudo-terminal,
// in its foreground, as gpuscope does when started from an interactive shell.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "launch_test_util.hpp"
#include "support/process.hpp"

namespace gpuscope::launch {
namespace {

using test::read_file;
using test::wait_for_file;

// Prints whether the job's process group is the terminal's foreground group: fields 5 and 8 of
// /proc/PID/stat are the process group and the terminal's foreground group.
const std::string kReportForeground =
    "set -- $(cat /proc/$$/stat); "
    "if [ \"$5\" = \"$8\" ]; then echo job:foreground; else echo job:background; fi";

struct TerminalRun {
  int exit_code = -1;
  std::string output;
};

class TerminalSession {
 public:
  // Starts `argv` as the leader of a new session whose controlling terminal is a new pty.
  explicit TerminalSession(const std::vector<std::string>& argv) {
    master_ = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master_ < 0 || ::grantpt(master_) != 0 || ::unlockpt(master_) != 0) return;
    const std::string slave = ::ptsname(master_);
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      // Only async-signal-safe calls between fork and exec.
      ::setsid();
      const int tty = ::open(slave.c_str(), O_RDWR);  // a session leader's first tty: its own
      ::dup2(tty, 0);
      ::dup2(tty, 1);
      ::dup2(tty, 2);
      if (tty > 2) ::close(tty);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
  }
  ~TerminalSession() {
    if (master_ >= 0) ::close(master_);
  }
  TerminalSession(const TerminalSession&) = delete;
  TerminalSession& operator=(const TerminalSession&) = delete;

  bool started() const { return pid_ > 0; }

  // Types `keys` on the terminal.
  void type(const std::string& keys) const {
    [[maybe_unused]] const ssize_t written = ::write(master_, keys.data(), keys.size());
  }

  // Reads everything the session prints until it closes the terminal, then reaps the leader.
  TerminalRun finish() {
    TerminalRun run;
    char buffer[4096];
    for (;;) {
      const ssize_t count = ::read(master_, buffer, sizeof(buffer));
      if (count > 0) {
        run.output.append(buffer, static_cast<std::size_t>(count));
      } else if (count < 0 && errno == EINTR) {
        continue;
      } else {
        break;  // EIO: every slave descriptor is closed
      }
    }
    int status = 0;
    ::waitpid(pid_, &status, 0);
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return run;
  }

 private:
  int master_ = -1;
  pid_t pid_ = -1;
};

std::vector<std::string> driver(std::vector<std::string> options, const std::string& script) {
  std::vector<std::string> argv{GPUSCOPE_LAUNCH_TEST_DRIVER, "--report-terminal"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.insert(argv.end(), {"--", "/bin/sh", "-c", script});
  return argv;
}

TEST(Terminal, JobGetsTheForegroundAndGpuscopeTakesItBack) {
  TerminalSession session(driver({}, kReportForeground));
  if (!session.started()) GTEST_SKIP() << "no pseudo-terminal available";
  const TerminalRun run = session.finish();
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_NE(run.output.find("job:foreground"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("driver:foreground"), std::string::npos) << run.output;
}

TEST(Terminal, WithoutJobControlTheJobStaysInTheBackground) {
  TerminalSession session(driver({"--no-job-control"}, kReportForeground));
  if (!session.started()) GTEST_SKIP() << "no pseudo-terminal available";
  const TerminalRun run = session.finish();
  EXPECT_NE(run.output.find("job:background"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("driver:foreground"), std::string::npos) << run.output;
}

TEST(Terminal, CtrlCGoesToTheJobAloneWhenItHoldsTheTerminal) {
  testing::TempDir dir;
  TerminalSession session(
      driver({"--events", dir.file("events")}, "touch " + dir.file("ready") + "; sleep 30"));
  if (!session.started()) GTEST_SKIP() << "no pseudo-terminal available";
  ASSERT_TRUE(wait_for_file(dir.file("ready")));
  session.type("\x03");  // the terminal's interrupt character: SIGINT to its foreground group
  const TerminalRun run = session.finish();
  EXPECT_EQ(run.exit_code, 130);
  // The driver was not in the foreground group, so it had nothing to forward.
  EXPECT_EQ(read_file(dir.file("events")).find("forwarded"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::launch
