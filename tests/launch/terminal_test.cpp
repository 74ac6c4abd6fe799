// Job control on a terminal: the driver runs as the session leader of a fresh pseudo-terminal,
// in its foreground, as gpuscope does when started from an interactive shell.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
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

// A program running as the leader of a new session whose controlling terminal is a fresh pty,
// and the test on the other side of it, typing and reading.
class TerminalSession {
 public:
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
    if (pid_ > 0 && !reaped_) {
      // A failed test: end the session (closing the master hangs up the terminal, which
      // ends what runs in its foreground).
      ::kill(-pid_, SIGKILL);
      ::close(master_);
      master_ = -1;
      ::waitpid(pid_, nullptr, 0);
    }
    if (master_ >= 0) ::close(master_);
  }
  TerminalSession(const TerminalSession&) = delete;
  TerminalSession& operator=(const TerminalSession&) = delete;

  bool started() const { return pid_ > 0; }

  // Types `keys` on the terminal.
  void type(const std::string& keys) const {
    [[maybe_unused]] const ssize_t written = ::write(master_, keys.data(), keys.size());
  }

  // Reads until the session has printed `part`; false if it closed the terminal first or a
  // minute passed (a limit against hanging, not a timing verdict).
  bool wait_for_output(const std::string& part) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (output_.find(part) == std::string::npos) {
      if (closed_ || std::chrono::steady_clock::now() > give_up) return false;
      read_some();
    }
    return true;
  }

  // Reads until the session closes the terminal (at most a minute), then reaps the leader.
  TerminalRun finish() {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!closed_ && std::chrono::steady_clock::now() < give_up) read_some();
    if (!closed_) return {-1, output_};  // the destructor ends the session
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), output_};
  }

 private:
  void read_some() {
    pollfd readable{master_, POLLIN, 0};
    if (::poll(&readable, 1, 100) <= 0) return;
    char buffer[4096];
    const ssize_t count = ::read(master_, buffer, sizeof(buffer));
    if (count > 0) {
      output_.append(buffer, static_cast<std::size_t>(count));
    } else if (count == 0 || errno != EINTR) {
      closed_ = true;  // EIO: every slave descriptor is closed
    }
  }

  int master_ = -1;
  pid_t pid_ = -1;
  bool reaped_ = false;
  bool closed_ = false;
  std::string output_;
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

TEST(Terminal, CtrlZStopsJobAndGpuscopeAndFgResumesBoth) {
  if (::access("/bin/bash", X_OK) != 0) GTEST_SKIP() << "needs /bin/bash for job control";
  testing::TempDir dir;
  TerminalSession session({"/bin/bash", "--norc", "--noprofile", "--noediting", "-i"});
  if (!session.started()) GTEST_SKIP() << "no pseudo-terminal available";
  // An interactive job: it reads a line from the terminal after being stopped and resumed.
  session.type(std::string(GPUSCOPE_LAUNCH_TEST_DRIVER) + " --events " + dir.file("events") +
               " -- /bin/sh -c 'touch " + dir.file("ready") + "; read line; echo got:$line'\n");
  ASSERT_TRUE(wait_for_file(dir.file("ready")));
  session.type("\x1a");  // Ctrl-Z: SIGTSTP to the terminal's foreground group, the job's
  // bash reports the stop only if gpuscope's group (its job) stopped too.
  ASSERT_TRUE(session.wait_for_output("Stopped")) << session.finish().output;
  session.type("fg\n");
  session.type("hello\n");  // read by the job once gpuscope has handed the terminal back to it
  session.type("echo status=$?\n");
  session.type("exit\n");
  const TerminalRun run = session.finish();
  EXPECT_NE(run.output.find("got:hello"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("status=0"), std::string::npos) << run.output;
  EXPECT_NE(read_file(dir.file("events")).find("job_stop: the job was stopped by SIGTSTP"),
            std::string::npos);
}

}  // namespace
}  // namespace gpuscope::launch
