#include "launch/command_lookup.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>

#include "launch_test_util.hpp"
#include "support/process.hpp"

namespace gpuscope::launch {
namespace {

using test::write_file;

class CommandLookup : public ::testing::Test {
 protected:
  CommandLookup() {
    ::mkdir(first_.c_str(), 0755);
    ::mkdir(second_.c_str(), 0755);
  }
  std::string search_path() const { return first_ + ":" + second_; }

  testing::TempDir dir_;
  std::string first_ = dir_.file("first");
  std::string second_ = dir_.file("second");
};

TEST_F(CommandLookup, FindsAnExecutableOnThePath) {
  write_file(second_ + "/tool", "#!/bin/sh\n", 0755);
  const auto path = resolve_command("tool", search_path());
  ASSERT_TRUE(path.has_value()) << path.error().message();
  EXPECT_EQ(*path, second_ + "/tool");
}

TEST_F(CommandLookup, SkipsANonExecutableMatchForALaterExecutableOne) {
  write_file(first_ + "/tool", "#!/bin/sh\n", 0644);
  write_file(second_ + "/tool", "#!/bin/sh\n", 0755);
  const auto path = resolve_command("tool", search_path());
  ASSERT_TRUE(path.has_value()) << path.error().message();
  EXPECT_EQ(*path, second_ + "/tool");
}

TEST_F(CommandLookup, MissingCommandIsNotFound) {
  const auto path = resolve_command("gpuscope-no-such-tool", search_path());
  ASSERT_FALSE(path.has_value());
  EXPECT_EQ(path.error().reason, SpawnFailure::Reason::NotFound);
  EXPECT_EQ(path.error().exit_code(), 127);
  EXPECT_EQ(path.error().message(), "command not found: gpuscope-no-such-tool");
}

TEST_F(CommandLookup, OnlyNonExecutableMatchIsNotExecutable) {
  write_file(first_ + "/tool", "#!/bin/sh\n", 0644);
  const auto path = resolve_command("tool", search_path());
  ASSERT_FALSE(path.has_value());
  EXPECT_EQ(path.error().reason, SpawnFailure::Reason::NotExecutable);
  EXPECT_EQ(path.error().exit_code(), 126);
  EXPECT_EQ(path.error().error_number, EACCES);
  EXPECT_EQ(path.error().path, first_ + "/tool");
}

TEST_F(CommandLookup, DirectoryNamedDirectlyIsNotExecutable) {
  const auto path = resolve_command(first_, search_path());
  ASSERT_FALSE(path.has_value());
  EXPECT_EQ(path.error().exit_code(), 126);
}

TEST_F(CommandLookup, MissingFileNamedByPathIsNotFound) {
  const auto path = resolve_command(first_ + "/absent", search_path());
  ASSERT_FALSE(path.has_value());
  EXPECT_EQ(path.error().exit_code(), 127);
  EXPECT_EQ(path.error().error_number, ENOENT);
}

TEST_F(CommandLookup, EmptyCommandIsNotFound) {
  EXPECT_EQ(resolve_command("", search_path()).error().exit_code(), 127);
}

}  // namespace
}  // namespace gpuscope::launch
