// Output capture: every byte passed through unchanged, and lines with timestamps delivered.
// The test process's own stdout and stderr are redirected to files to see the passthrough.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include "launch/job.hpp"
#include "launch/line_splitter.hpp"
#include "launch_test_util.hpp"
#include "support/process.hpp"

namespace gpuscope::launch {
namespace {

using test::has_problem;
using test::JobTest;
using test::read_file;
using test::RedirectedFd;

class JobOutput : public JobTest {
 protected:
  JobResult run(const std::string& script, bool capture = true) {
    LaunchOptions options;
    options.argv = wrap_command(script);
    options.capture_output = capture;
    options.job_control = false;
    JobCallbacks callbacks;
    callbacks.on_output = [this](const OutputLine& line) {
      (line.stream == OutputStream::Stdout ? out_lines_ : err_lines_).push_back(line);
    };
    const RedirectedFd out(STDOUT_FILENO, dir_.file("stdout"));
    const RedirectedFd err(STDERR_FILENO, dir_.file("stderr"));
    return run_job(options, callbacks);
  }
  static std::vector<std::string> texts(const std::vector<OutputLine>& lines) {
    std::vector<std::string> result;
    for (const OutputLine& line : lines) result.push_back(line.text);
    return result;
  }

  testing::TempDir dir_;
  std::vector<OutputLine> out_lines_;
  std::vector<OutputLine> err_lines_;
};

TEST_F(JobOutput, DeliversLinesPerStreamInOrderWithTimestamps) {
  const JobResult result = run(
      "printf 'one\\ntwo\\n'; printf 'err\\n' >&2; sleep 0.05; printf 'three\\npartial'; exit 3");
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(texts(out_lines_), (std::vector<std::string>{"one", "two", "three", "partial"}));
  EXPECT_EQ(texts(err_lines_), std::vector<std::string>{"err"});
  for (const OutputLine& line : out_lines_) {
    EXPECT_EQ(line.stream, OutputStream::Stdout);
    EXPECT_GE(line.mono_ns, result.start_mono_ns);
    EXPECT_GT(line.wall_ns, 0);
  }
  for (std::size_t i = 1; i < out_lines_.size(); ++i) {
    EXPECT_LE(out_lines_[i - 1].mono_ns, out_lines_[i].mono_ns);
  }
  EXPECT_EQ(err_lines_.front().stream, OutputStream::Stderr);
}

TEST_F(JobOutput, PassesEveryByteThroughUnchanged) {
  run("printf 'a\\000b\\377\\r\\n'; printf 'e1\\ne2' >&2; printf 'tail'");
  EXPECT_EQ(read_file(dir_.file("stdout")), std::string("a\0b\xff\r\ntail", 10));
  EXPECT_EQ(read_file(dir_.file("stderr")), "e1\ne2");
  EXPECT_EQ(texts(out_lines_), (std::vector<std::string>{std::string("a\0b\xff\r", 5), "tail"}));
  EXPECT_EQ(texts(err_lines_), (std::vector<std::string>{"e1", "e2"}));
}

TEST_F(JobOutput, LongLinesAreCutAtTheCap) {
  run("head -c 150000 /dev/zero | tr '\\000' x");
  ASSERT_EQ(out_lines_.size(), 3U);
  EXPECT_EQ(out_lines_[0].text.size(), kMaxLineBytes);
  EXPECT_EQ(out_lines_[1].text.size(), kMaxLineBytes);
  EXPECT_EQ(out_lines_[2].text.size(), 150000 - 2 * kMaxLineBytes);
  EXPECT_EQ(read_file(dir_.file("stdout")), std::string(150000, 'x'));
}

TEST_F(JobOutput, WithoutCaptureTheJobWritesToOurDescriptorsDirectly) {
  run("printf 'direct\\n'; test -p /dev/stdout && echo piped >&2; exit 0", false);
  EXPECT_TRUE(out_lines_.empty());
  EXPECT_EQ(read_file(dir_.file("stdout")), "direct\n");
  EXPECT_EQ(read_file(dir_.file("stderr")), "");  // a file, not a pipe of ours
}

TEST_F(JobOutput, BackgroundProcessHoldingThePipeDoesNotHangTheWait) {
  const JobResult result = run("sleep 30 & echo started");
  ::kill(-result.pid, SIGKILL);  // the leftover sleep, still in the job's process group
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(texts(out_lines_), std::vector<std::string>{"started"});
  EXPECT_TRUE(has_problem(result.problems, "still holds its output open"));
}

TEST_F(JobOutput, ClosedStdoutNeitherKillsGpuscopeNorBreaksTheJob) {
  LaunchOptions options;
  options.argv = wrap_command("echo one; echo two; exit 6");
  options.capture_output = true;
  options.job_control = false;
  std::vector<std::string> lines;
  JobCallbacks callbacks;
  callbacks.on_output = [&](const OutputLine& line) { lines.push_back(line.text); };

  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);  // nobody reads: writes fail with EPIPE (and raise SIGPIPE)
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  ::dup2(fds[1], STDOUT_FILENO);
  ::close(fds[1]);
  const JobResult result = run_job(options, callbacks);
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);

  EXPECT_EQ(result.exit_code, 6);
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "two"}));
  EXPECT_TRUE(has_problem(result.problems, "cannot pass the job's stdout through"));
}

}  // namespace
}  // namespace gpuscope::launch
