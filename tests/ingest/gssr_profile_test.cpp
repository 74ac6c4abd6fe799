// gssr profile folders that cannot be read whole: a step folder the reader may not enter is an
// error naming it (its processes would be missing from the analysis), never skipped silently.
#include "ingest/tools/gssr_profile.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "support/temp_dir.hpp"

namespace gpuscope::ingest::gssr {
namespace {

namespace fs = std::filesystem;
const fs::path kProcessFile = fs::path(GPUSCOPE_TEST_FIXTURE_DIR) / "gssr" /
                              "profile_out_JobID_4242" / "train_job_4242_step_0" /
                              "train_job_4242_step_0_proc_0.json";
constexpr uid_t kNobody = 65534;

// A profile folder with two step folders, the second of which its owner has closed (0000).
fs::path make_profile(const testing::TempDir& dir) {
  const fs::path root = fs::path(dir.path()) / "profile_out_JobID_4242";
  fs::create_directories(root / "train_job_4242_step_0");
  fs::create_directories(root / "train_job_4242_step_1");
  fs::copy_file(kProcessFile, root / "train_job_4242_step_0" / kProcessFile.filename());
  fs::copy_file(kProcessFile, root / "train_job_4242_step_1" / "train_job_4242_step_1_proc_0.json");
  fs::permissions(dir.path(), fs::perms::all & ~fs::perms::others_write & ~fs::perms::group_write);
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    fs::permissions(entry.path(), entry.is_directory() ? fs::perms(0755) : fs::perms(0644));
  }
  fs::permissions(root, fs::perms(0755));
  fs::permissions(root / "train_job_4242_step_1", fs::perms::none);
  return root;
}

// What read_profile says of `root`, as a user who cannot enter the closed folder: root reads
// every folder whatever its mode, so as root the reading runs in a child that became nobody.
std::string read_as_unprivileged(const fs::path& root) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return "pipe failed";
  const pid_t child = fork();
  if (child == 0) {
    close(pipe_fds[0]);
    if (geteuid() == 0 && (setgid(kNobody) != 0 || setuid(kNobody) != 0)) _exit(3);
    std::string said = "no error";
    try {
      read_profile(root);
    } catch (const Error& e) {
      said = e.what();
    }
    const ssize_t n = write(pipe_fds[1], said.data(), said.size());
    _exit(n == static_cast<ssize_t>(said.size()) ? 0 : 4);
  }
  close(pipe_fds[1]);
  std::string said;
  char buffer[512];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof buffer)) > 0;) {
    said.append(buffer, static_cast<std::size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "the child failed";
  return said;
}

TEST(GssrProfile, AFolderThatCannotBeReadIsAnErrorNamingIt) {
  testing::TempDir dir;
  const fs::path root = make_profile(dir);
  const std::string said = read_as_unprivileged(root);
  EXPECT_NE(said.find("cannot read the folder"), std::string::npos) << said;
  EXPECT_NE(said.find("train_job_4242_step_1"), std::string::npos) << said;
  EXPECT_NE(said.find("would be missing"), std::string::npos) << said;
  fs::permissions(root / "train_job_4242_step_1", fs::perms(0755));
  // Opened again, the same folder reads whole: both processes.
  EXPECT_EQ(read_profile(root).processes.size(), 2U);
}

// Found by fuzz_gssr: a number too large for a double is a clear error, not an escaped
// exception of the JSON library.
TEST(GssrProfile, ANumberPastADoubleIsAnErrorNamingTheFile) {
  std::vector<std::string> notes;
  try {
    parse_process(R"({"metadata": {"job_id": 1, "start_time": 1795300000e00000615}, "data": {}})",
                  "x_proc_0.json", notes);
    FAIL() << "an overflowing number must be an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x_proc_0.json is not a gssr process file"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("cannot read"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpuscope::ingest::gssr
