// What gpuscope may write, through the binary: -f replaces only
// regular files, never an input; "-" is standard output where the format is a stream; a run
// named twice is counted once; missing folders are created; bad output paths are one message.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/process.hpp"

namespace gpuscope::testing {
namespace {

namespace fs = std::filesystem;

class OutputFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.file("run.db");
    const ProcessResult r = run_gpuscope({"profile", "--simulate", "h100x4-straggler", "-q", "-s",
                                          "50", "-o", db_, "--", "sleep", "0.4"},
                                         {{"GPUSCOPE_SIM_STATE", dir_.file("state.json")}});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    fingerprint_ = read_file(db_);
  }
  // The run database is byte for byte what profile wrote.
  void expect_database_intact() const { EXPECT_EQ(read_file(db_), fingerprint_); }
  static bool null_is_a_device() {
    struct stat info {};
    return ::stat("/dev/null", &info) == 0 && S_ISCHR(info.st_mode);
  }

  TempDir dir_;
  std::string db_;
  std::string fingerprint_;
};

TEST_F(OutputFiles, ForceNeverReplacesADeviceNode) {
  if (geteuid() != 0) GTEST_SKIP() << "only root could replace /dev/null (the reported bug)";
  const std::vector<std::vector<std::string>> commands = {
      {"profile", "--simulate", "h100", "-q", "-f", "-o", "/dev/null", "--", "true"},
      {"report", db_, "-o", "/dev/null", "-f"},
      {"export", "--perfetto", "/dev/null", db_, "-f"},
      {"merge", "/dev/null", db_, "-f"},
  };
  for (const auto& command : commands) {
    const ProcessResult r = run_gpuscope(command);
    EXPECT_EQ(r.exit_code, 2) << command.front() << ": " << r.err;
    EXPECT_NE(r.err.find("not a regular file"), std::string::npos) << r.err;
    ASSERT_TRUE(null_is_a_device()) << "after " << command.front();
  }
}

TEST_F(OutputFiles, ForceNeverReplacesAFifoOrADirectory) {
  const std::string fifo = dir_.file("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& target : {fifo, dir_.path()}) {
    for (const auto& command :
         std::vector<std::vector<std::string>>{{"report", db_, "-o", target, "-f"},
                                               {"export", "--perfetto", target, db_, "-f"},
                                               {"merge", target, db_, "-f"}}) {
      const ProcessResult r = run_gpuscope(command);
      EXPECT_EQ(r.exit_code, 2) << command.front() << " " << target << ": " << r.err;
    }
  }
  struct stat info {};
  ASSERT_EQ(::stat(fifo.c_str(), &info), 0);
  EXPECT_TRUE(S_ISFIFO(info.st_mode));
}

TEST_F(OutputFiles, AnOutputThatIsAnInputIsRefusedHoweverSpelled) {
  const std::string alias = dir_.file("alias.db");
  fs::create_symlink(db_, alias);
  const std::string hard = dir_.file("hard.db");
  fs::create_hard_link(db_, hard);
  const std::string dotted = dir_.path() + "/./run.db";
  for (const auto& command :
       std::vector<std::vector<std::string>>{{"report", db_, "-o", db_, "-f"},
                                             {"report", db_, "-o", dotted, "-f"},
                                             {"report", dir_.path(), "-o", hard, "-f"},
                                             {"export", "--perfetto", alias, db_, "-f"},
                                             {"export", "--perfetto", db_, hard, "-f"},
                                             {"merge", hard, db_, "-f"}}) {
    const ProcessResult r = run_gpuscope(command);
    EXPECT_EQ(r.exit_code, 2) << command[1] << " " << command[3] << ": " << r.err;
    EXPECT_NE(r.err.find("input"), std::string::npos) << r.err;
  }
  expect_database_intact();
}

TEST_F(OutputFiles, TheSameRunNamedTwiceIsCountedOnce) {
  const ProcessResult once = run_gpuscope({"analyze", db_, "--json"});
  ASSERT_EQ(once.exit_code, 0) << once.err;
  const ProcessResult twice =
      run_gpuscope({"analyze", db_, dir_.path() + "/./run.db", dir_.path(), "--json"});
  ASSERT_EQ(twice.exit_code, 0) << twice.err;
  EXPECT_NE(twice.err.find("read once"), std::string::npos) << twice.err;
  const auto a = nlohmann::json::parse(once.out);
  const auto b = nlohmann::json::parse(twice.out);
  EXPECT_EQ(a["runs"].size(), b["runs"].size());
  ASSERT_TRUE(a.contains("energy_j"));
  EXPECT_EQ(a.at("energy_j").dump(), b.at("energy_j").dump());
  EXPECT_EQ(a.at("gpus").size(), b.at("gpus").size());
  // The same run in a second file (a copy, as a merged database holds its ranks) is refused,
  // as merge refuses it.
  fs::copy_file(db_, dir_.file("copy.db"));
  const ProcessResult copied = run_gpuscope({"analyze", db_, dir_.file("copy.db")});
  EXPECT_EQ(copied.exit_code, 2) << copied.err;
  EXPECT_NE(copied.err.find("hold the same run"), std::string::npos) << copied.err;
}

TEST_F(OutputFiles, StandardOutputForStreams) {
  const ProcessResult trace = run_gpuscope({"export", "--perfetto", "-", db_});
  ASSERT_EQ(trace.exit_code, 0) << trace.err;
  EXPECT_TRUE(nlohmann::json::accept(trace.out));
  const ProcessResult html = run_gpuscope({"report", db_, "-o", "-"});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_EQ(html.out.rfind("<!DOCTYPE html>", 0), 0U) << html.out.substr(0, 40);
  const ProcessResult db =
      run_gpuscope({"profile", "--simulate", "h100", "-q", "-o", "-", "--", "true"});
  EXPECT_EQ(db.exit_code, 2) << db.err;
  EXPECT_NE(db.err.find("cannot be a run database"), std::string::npos) << db.err;
}

TEST_F(OutputFiles, ALinkIsFollowedAndStays) {
  const std::string real = dir_.file("real.json");
  std::ofstream(real) << "old";
  const std::string link = dir_.file("trace.json");
  fs::create_symlink(real, link);
  const ProcessResult r = run_gpuscope({"export", "--perfetto", link, db_, "-f"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(nlohmann::json::accept(read_file(real)));
  // Nothing of ours is left beside it.
  for (const auto& entry : fs::directory_iterator(dir_.path())) {
    EXPECT_EQ(entry.path().string().find("gpuscope-tmp"), std::string::npos) << entry.path();
  }
}

TEST_F(OutputFiles, MissingFoldersAreCreated) {
  const ProcessResult png = run_gpuscope({"report", db_, "-o", dir_.file("plots/run.png")});
  ASSERT_EQ(png.exit_code, 0) << png.err;
  EXPECT_TRUE(fs::exists(dir_.file("plots/run-timeseries.png")));
  const ProcessResult html = run_gpuscope({"report", db_, "-o", dir_.file("a/b/report.html")});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_TRUE(fs::exists(dir_.file("a/b/report.html")));
}

TEST_F(OutputFiles, BadOutputPathsAreOneMessageNotAnInternalError) {
  const std::string long_name = dir_.file(std::string(300, 'x') + ".html");
  std::ofstream(dir_.file("plain")) << "a file where a folder should be";
  for (const auto& command : std::vector<std::vector<std::string>>{
           {"report", db_, "-o", long_name},
           {"export", "--perfetto", long_name, db_},
           {"profile", "--simulate", "h100", "-q", "-o", long_name, "--", "true"},
           {"report", db_, "-o", dir_.file("plain/report.html")},
           {"merge", dir_.file("plain/m.db"), db_}}) {
    const ProcessResult r = run_gpuscope(command);
    EXPECT_EQ(r.exit_code, 2) << command[0] << ": " << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.rfind("gpuscope: error: ", 0), 0U) << r.err;
  }
}

}  // namespace
}  // namespace gpuscope::testing
