// util/output_file and core/output_file: the one atomic writer and the rules for what gpuscope
// may replace.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "core/output_check.hpp"
#include "support/planted_links.hpp"
#include "support/temp_dir.hpp"
#include "util/output_file.hpp"

namespace gpuscope::testing {
namespace {

namespace fs = std::filesystem;

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

TEST(AtomicFile, ReplacesTheTargetOnlyAtCommit) {
  TempDir dir;
  const std::string target = dir.file("report.html");
  write(target, "old");
  util::AtomicFile file(target);
  ASSERT_FALSE(file.open());
  ASSERT_FALSE(file.write("new contents"));
  EXPECT_EQ(read_file(target), "old");  // untouched until commit
  EXPECT_TRUE(fs::exists(file.temporary()));
  const fs::path staging = file.temporary().parent_path();
  EXPECT_EQ(staging.parent_path(), fs::path(dir.path()));
  ASSERT_FALSE(file.commit());
  EXPECT_EQ(read_file(target), "new contents");
  EXPECT_FALSE(fs::exists(staging)) << "the private folder goes at commit";
}

TEST(AtomicFile, AFailedWriterLeavesTheTargetAndNoTemporary) {
  TempDir dir;
  const std::string target = dir.file("trace.json");
  write(target, "old");
  fs::path temporary;
  {
    util::AtomicFile file(target);
    ASSERT_FALSE(file.open());
    ASSERT_FALSE(file.write("half a tra"));
    temporary = file.temporary();
  }  // destroyed without commit: an exception on the way out
  EXPECT_EQ(read_file(target), "old");
  EXPECT_FALSE(fs::exists(temporary));
  EXPECT_FALSE(fs::exists(temporary.parent_path()));
}

TEST(AtomicFile, ACrashBetweenWriteAndRenameLeavesTheTargetIntact) {
  TempDir dir;
  const std::string target = dir.file("run.png");
  write(target, "old");
  // A child process writes and dies (no destructor runs) before renaming, as a kill -9 would.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    util::AtomicFile file(target);
    if (file.open() || file.write("new")) _exit(2);
    _exit(0);  // no commit, no cleanup
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(read_file(target), "old");
  // What is left is recognisably gpuscope's: its private folder beside the target, holding the
  // file under the target's name.
  int entries = 0;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    ++entries;
    if (entry.path() == fs::path(target)) continue;
    EXPECT_TRUE(entry.path().filename().string().starts_with(".run.png.gpuscope-tmp-"))
        << entry.path();
    EXPECT_EQ(read_file((entry.path() / "run.png").string()), "new");
  }
  EXPECT_EQ(entries, 2);
}

TEST(CommitWrittenFile, MovesAFileAnotherLibraryWroteOntoItsTarget) {
  TempDir dir;
  const fs::path target = dir.file("plot.png");
  const fs::path temporary = dir.file("written-by-a-library.png");
  std::ofstream(target) << "old";
  std::ofstream(temporary) << "new plot";
  EXPECT_FALSE(util::commit_written_file(temporary, target));
  EXPECT_FALSE(fs::exists(temporary));
  std::ifstream in(target);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "new plot");
  // Nothing to commit: an error, the target left as it was.
  EXPECT_TRUE(util::commit_written_file(temporary, target));
  EXPECT_TRUE(fs::exists(target));
}

// Every temporary name is unpredictable and made exclusively, in a private folder on
// the target's file system.
TEST(StagedFile, IsAPrivateUnpredictableFolderBesideTheTarget) {
  TempDir dir;
  const fs::path target = dir.file("report.html");
  util::StagedFile first(target);
  util::StagedFile second(target);
  ASSERT_FALSE(first.create());
  ASSERT_FALSE(second.create());
  EXPECT_NE(first.path(), second.path()) << "two writers of one process never share a name";
  for (const auto* staged : {&first, &second}) {
    const fs::path folder = staged->path().parent_path();
    EXPECT_EQ(folder.parent_path(), fs::path(dir.path()));
    EXPECT_TRUE(folder.filename().string().starts_with(".report.html.gpuscope-tmp-")) << folder;
    EXPECT_EQ(staged->path().filename(), "report.html");
    struct stat info {};
    ASSERT_EQ(lstat(folder.c_str(), &info), 0);
    EXPECT_TRUE(S_ISDIR(info.st_mode));
    EXPECT_EQ(info.st_mode & 0777, 0700U) << "nobody else may enter it";
  }
  // A writer that follows links (PLplot's fopen, SQLite) writes there; commit renames it.
  std::ofstream(first.path()) << "drawn";
  ASSERT_FALSE(first.commit());
  EXPECT_EQ(read_file(target.string()), "drawn");
  const fs::path left = second.path().parent_path();
  { util::StagedFile gone(target); }  // made nothing
  EXPECT_TRUE(fs::exists(left));
}

TEST(StagedFile, ALongNameStillFitsItsFolder) {
  TempDir dir;
  const fs::path target = dir.file(std::string(220, 'n') + ".db");
  util::StagedFile staged(target);
  ASSERT_FALSE(staged.create());
  std::ofstream(staged.path()) << "x";
  ASSERT_FALSE(staged.commit());
  EXPECT_TRUE(fs::exists(target));
}

TEST(AtomicFile, PlantedLinksAtPredictableNamesAreNeverFollowedNorRemoved) {
  TempDir dir;
  fs::create_directory(dir.file("shared"));
  const fs::path target = dir.file("shared/report.html");
  const PlantedLinks links(dir.file("victim"), predictable_temporary_names(target));
  ASSERT_FALSE(util::write_file_atomically(target, "<html>report</html>"));
  EXPECT_TRUE(links.victim_untouched());
  EXPECT_EQ(read_file(target.string()), "<html>report</html>");
  EXPECT_TRUE(leftovers(dir.file("shared"), links, {"report.html"}).empty());
}

TEST(PathKind, TellsRegularFilesFromEverythingElse) {
  TempDir dir;
  std::error_code error;
  EXPECT_EQ(util::path_kind(dir.file("none"), error), util::PathKind::Absent);
  write(dir.file("file"), "x");
  EXPECT_EQ(util::path_kind(dir.file("file"), error), util::PathKind::Regular);
  EXPECT_EQ(util::path_kind(dir.path(), error), util::PathKind::Directory);
  EXPECT_EQ(util::path_kind("/dev/null", error), util::PathKind::CharacterDevice);
  ASSERT_EQ(mkfifo(dir.file("fifo").c_str(), 0600), 0);
  EXPECT_EQ(util::path_kind(dir.file("fifo"), error), util::PathKind::Fifo);
  fs::create_symlink(dir.file("file"), dir.file("link"));
  EXPECT_EQ(util::path_kind(dir.file("link"), error), util::PathKind::Regular);  // followed
  fs::create_symlink(dir.file("gone"), dir.file("dangling"));
  EXPECT_EQ(util::path_kind(dir.file("dangling"), error), util::PathKind::BrokenLink);
  EXPECT_FALSE(error);
}

TEST(SameFile, SeesThroughSpellingsLinksAndHardLinks) {
  TempDir dir;
  write(dir.file("run.db"), "x");
  write(dir.file("other.db"), "x");
  fs::create_symlink(dir.file("run.db"), dir.file("alias.db"));
  fs::create_hard_link(dir.file("run.db"), dir.file("hard.db"));
  EXPECT_TRUE(util::same_file(dir.file("run.db"), dir.path() + "/./run.db"));
  EXPECT_TRUE(util::same_file(dir.file("run.db"), dir.file("alias.db")));
  EXPECT_TRUE(util::same_file(dir.file("run.db"), dir.file("hard.db")));
  EXPECT_FALSE(util::same_file(dir.file("run.db"), dir.file("other.db")));
  EXPECT_FALSE(util::same_file(dir.file("run.db"), dir.file("missing.db")));
}

// The refusals, each exit code 2 before anything is written.
int refusal_code(const fs::path& path, const OutputCheck& check) {
  try {
    (void)check_output_file(path, check);
  } catch (const Error& e) {
    return e.exit_code();
  }
  return 0;
}

TEST(CheckOutputFile, RefusesWhatIsNotARegularFileOrIsAnInput) {
  TempDir dir;
  OutputCheck force;
  force.force = true;
  EXPECT_EQ(refusal_code("/dev/null", force), 2);
  ASSERT_EQ(mkfifo(dir.file("fifo").c_str(), 0600), 0);
  EXPECT_EQ(refusal_code(dir.file("fifo"), force), 2);
  EXPECT_EQ(refusal_code(dir.path(), force), 2);
  write(dir.file("run.db"), "x");
  EXPECT_EQ(refusal_code(dir.file("run.db"), OutputCheck{}), 2);  // exists, no -f
  EXPECT_EQ(refusal_code(dir.file("run.db"), force), 0);
  OutputCheck input = force;
  input.inputs = {dir.path() + "/./run.db"};
  EXPECT_EQ(refusal_code(dir.file("run.db"), input), 2);
  EXPECT_EQ(refusal_code("-", force), 2);  // not a stream format
  OutputCheck stream = force;
  stream.stdout_allowed = true;
  EXPECT_EQ(check_output_file("-", stream), "-");
  EXPECT_EQ(check_output_file("/dev/stdout", stream), "-");
  EXPECT_EQ(refusal_code(dir.file(std::string(300, 'a')), force), 2);  // name too long
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

TEST(CheckOutputFile, FollowsLinksAndCreatesFolders) {
  TempDir dir;
  write(dir.file("real.html"), "old");
  fs::create_symlink(dir.file("real.html"), dir.file("link.html"));
  OutputCheck force;
  force.force = true;
  EXPECT_EQ(check_output_file(dir.file("link.html"), force), fs::canonical(dir.file("real.html")));
  EXPECT_EQ(check_output_file(dir.file("plots/deeper/run.png"), force),
            dir.file("plots/deeper/run.png"));
  EXPECT_TRUE(fs::is_directory(dir.file("plots/deeper")));
}

}  // namespace
}  // namespace gpuscope::testing
