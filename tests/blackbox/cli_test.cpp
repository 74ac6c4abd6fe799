// The command line itself: version, help, and how usage errors are reported.
#include <gtest/gtest.h>

#include "support/process.hpp"

namespace gpuscope::testing {
namespace {

TEST(Cli, VersionPrintsTheProjectVersion) {
  auto r = run_gpuscope({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("gpuscope 0.", 0), 0U) << r.out;
}

TEST(Cli, HelpListsTheSubcommands) {
  auto r = run_gpuscope({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("devices"), std::string::npos);
  EXPECT_NE(r.out.find("scenarios"), std::string::npos);
}

TEST(Cli, EachSubcommandHasHelp) {
  for (const char* command : {"devices", "scenarios"}) {
    auto r = run_gpuscope({command, "--help"});
    EXPECT_EQ(r.exit_code, 0) << command;
    EXPECT_NE(r.out.find("--json"), std::string::npos) << command;
  }
  auto devices = run_gpuscope({"devices", "--help"});
  EXPECT_NE(devices.out.find("--simulate"), std::string::npos);
  EXPECT_NE(devices.out.find("--nvml-library"), std::string::npos);
}

TEST(Cli, NoSubcommandIsAUsageError) {
  auto r = run_gpuscope({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("gpuscope: error:"), std::string::npos) << r.err;
}

TEST(Cli, UnknownOptionIsOneClearLineAndExitCode2) {
  auto r = run_gpuscope({"devices", "--frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("gpuscope: error:"), std::string::npos);
  EXPECT_NE(r.err.find("--frobnicate"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gpuscope devices --help"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(Cli, UnknownSubcommandIsAUsageError) {
  auto r = run_gpuscope({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("frobnicate"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gpuscope::testing
