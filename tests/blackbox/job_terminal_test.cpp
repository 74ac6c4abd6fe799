// `gpuscope job` against a server, or a proxy in front of it, whose error body holds terminal
// escape sequences, a BEL and a line of its own: the real binary prints them shown (\x1b, \x07),
// on its one error line, and never the credentials a proxy echoes back. Before the fix the bytes
// reached the terminal as they came, and the bearer token was printed.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "support/echo_proxy.hpp"
#include "support/process.hpp"

namespace gpuscope::testing {
namespace {

TEST(JobTerminal, ServerWordsAreShownNotActedOnAndSecretsNeverPrinted) {
  TempDir dir;
  std::ofstream(dir.file("token")) << "t0ken-s3cret\n";
  chmod(dir.file("token").c_str(), 0600);
  EchoProxy proxy("\x1b]0;owned\x07\x1b[2J\rgpuscope: note: all is well\n", 400);
  const ProcessResult r =
      run_gpuscope({"job", "--hosts", "n1", "--from", "1700000000", "--to", "1700003600",
                    "--prometheus", proxy.url()},
                   {{"GPUSCOPE_PROMETHEUS_BEARER_TOKEN_FILE", dir.file("token")},
                    {"GPUSCOPE_CONFIG", "\x01"},
                    {"XDG_CONFIG_HOME", dir.file("none")},
                    {"GPUSCOPE_PROMETHEUS_URL", "\x01"}});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x07'), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\\x1b]0;owned\\x07\\x1b[2J"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("t0ken-s3cret"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Authorization: Bearer [secret]"), std::string::npos) << r.err;
  // One line, the error's: nothing the server said starts a line of its own.
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("gpuscope: error: ", 0), 0U) << r.err;
}

}  // namespace
}  // namespace gpuscope::testing
