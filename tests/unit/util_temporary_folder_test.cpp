// util::TemporaryFolder: private (0700, made by mkdtemp under $TMPDIR), removed with what is in
// it on every exit path: the object going, an exception, and SIGTERM/SIGINT ending the process
// (checked in a child process that ends itself so).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "support/temp_dir.hpp"
#include "util/temporary_folder.hpp"

namespace gpuscope::util {
namespace {

namespace fs = std::filesystem;

void fill(const fs::path& folder) {
  fs::create_directories(folder / "parts" / "deeper");
  for (int i = 0; i < 40; ++i) {
    std::ofstream(folder / "parts" / ("part-" + std::to_string(i) + ".db")) << "data";
  }
  std::ofstream(folder / "parts" / "deeper" / "x.db-journal") << "j";
  std::ofstream(folder / "out.db") << "db";
}

TEST(TemporaryFolder, IsPrivateUnpredictableAndRemovedWithItsContent) {
  testing::TempDir base;
  fs::path made, other;
  {
    TemporaryFolder folder("gpuscope-import-", base.path());
    TemporaryFolder second("gpuscope-import-", base.path());
    made = folder.path();
    other = second.path();
    EXPECT_EQ(made.parent_path(), fs::path(base.path()));
    EXPECT_TRUE(made.filename().string().starts_with("gpuscope-import-"));
    EXPECT_NE(made, other) << "two folders of one process never share a name";
    struct stat st {};
    ASSERT_EQ(stat(made.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700U) << "nobody else may enter it";
    fill(made);
  }
  EXPECT_FALSE(fs::exists(made));
  EXPECT_FALSE(fs::exists(other));
}

TEST(TemporaryFolder, GoesWhenAnExceptionUnwinds) {
  testing::TempDir base;
  fs::path made;
  try {
    TemporaryFolder folder("gpuscope-import-", base.path());
    made = folder.path();
    fill(made);
    throw std::runtime_error("a reader failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(made.empty());
  EXPECT_FALSE(fs::exists(made));
}

TEST(TemporaryFolder, UsesTmpdirAndSaysWhyItCannot) {
  testing::TempDir base;
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  setenv("TMPDIR", base.path().c_str(), 1);
  {
    TemporaryFolder folder("gpuscope-import-");
    EXPECT_EQ(folder.path().parent_path(), fs::path(base.path()));
  }
  old ? setenv("TMPDIR", saved.c_str(), 1) : unsetenv("TMPDIR");
  EXPECT_THROW(TemporaryFolder("x-", fs::path(base.path()) / "missing"), std::system_error);
}

// A child makes a folder, fills it, tells the parent its name and ends itself by `signal_number`
// (process-directed, as a Ctrl-C or a scheduler's kill is); the parent checks the folder is gone
// and the child died of that signal.
void check_removed_on(int signal_number) {
  testing::TempDir base;
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(pipe_fds[0]);
    TemporaryFolder folder("gpuscope-import-", base.path());
    fill(folder.path());
    const std::string name = folder.path().string() + "\n";
    if (write(pipe_fds[1], name.data(), name.size()) != static_cast<ssize_t>(name.size())) _exit(3);
    kill(getpid(), signal_number);
    _exit(4);  // not reached: the signal ends the process
  }
  close(pipe_fds[1]);
  std::string name;
  char c;
  while (read(pipe_fds[0], &c, 1) == 1 && c != '\n') name += c;
  close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), signal_number);
  ASSERT_FALSE(name.empty());
  EXPECT_FALSE(fs::exists(name)) << name << " survived signal " << signal_number;
}

TEST(TemporaryFolder, GoesWhenSigtermEndsTheProcess) {
  check_removed_on(SIGTERM);
}
TEST(TemporaryFolder, GoesWhenSigintEndsTheProcess) {
  check_removed_on(SIGINT);
}

TEST(TemporaryFolder, LeavesAHandlerSomeoneElseInstalledAlone) {
  struct sigaction mine {};
  mine.sa_handler = [](int) {};
  sigemptyset(&mine.sa_mask);
  struct sigaction before {};
  ASSERT_EQ(sigaction(SIGHUP, &mine, &before), 0);
  testing::TempDir base;
  {
    TemporaryFolder folder("gpuscope-import-", base.path());
    struct sigaction now {};
    sigaction(SIGHUP, nullptr, &now);
    EXPECT_EQ(now.sa_handler, mine.sa_handler);
  }
  sigaction(SIGHUP, &before, nullptr);
}

// A workflow that puts in its own handler while a folder exists (the sweep's restore,
// a run's forwarding of Ctrl-C to the job) keeps it when the folder goes; before, the default
// action was put back over it.
void do_nothing(int) {}

TEST(TemporaryFolder, AHandlerInstalledAfterTheFolderStaysWhenItGoes) {
  struct sigaction found {};
  ASSERT_EQ(sigaction(SIGHUP, nullptr, &found), 0);
  struct sigaction defaults {};
  defaults.sa_handler = SIG_DFL;
  sigemptyset(&defaults.sa_mask);
  ASSERT_EQ(sigaction(SIGHUP, &defaults, nullptr), 0);
  testing::TempDir base;
  struct sigaction mine {};
  mine.sa_handler = do_nothing;
  sigemptyset(&mine.sa_mask);
  {
    TemporaryFolder folder("gpuscope-import-", base.path());
    struct sigaction now {};
    sigaction(SIGHUP, nullptr, &now);
    EXPECT_NE(now.sa_handler, SIG_DFL) << "the folder's handler went in";
    ASSERT_EQ(sigaction(SIGHUP, &mine, nullptr), 0);  // the workflow's, after it
  }
  struct sigaction after {};
  sigaction(SIGHUP, nullptr, &after);
  EXPECT_EQ(after.sa_handler, &do_nothing) << "the workflow's handler was replaced";
  sigaction(SIGHUP, &found, nullptr);
}

TEST(TemporaryFolder, AKeptFolderStaysWithWhatItHolds) {
  testing::TempDir base;
  fs::path made;
  {
    TemporaryFolder folder("gpuscope-push-", base.path());
    made = folder.path();
    std::ofstream(made / "undelivered.prom") << "samples";
    folder.keep();
  }
  EXPECT_TRUE(fs::exists(made / "undelivered.prom"));
}

}  // namespace
}  // namespace gpuscope::util
