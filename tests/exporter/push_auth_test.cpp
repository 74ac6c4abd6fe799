// Push credentials: where they may come from, and that no message ever shows them.
#include "exporter/push_auth.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "core/error.hpp"
#include "exporter/curl_transport.hpp"
#include "support/echo_proxy.hpp"
#include "support/refusal.hpp"
#include "support/temp_dir.hpp"
#include "util/secret_text.hpp"

namespace gpuscope::exporter {
namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

TEST(PushAuthTest, NoneWhenNothingIsSet) {
  auto auth = load_push_auth("", env_of({}));
  EXPECT_EQ(auth.kind, PushAuth::Kind::None);
}

TEST(PushAuthTest, FromEnvironment) {
  auto basic = load_push_auth(
      "", env_of({{"GPUSCOPE_PUSH_USER", "vm"}, {"GPUSCOPE_PUSH_PASSWORD", "pw:with:colons"}}));
  EXPECT_EQ(basic.kind, PushAuth::Kind::Basic);
  EXPECT_EQ(basic.user, "vm");
  EXPECT_EQ(basic.secret, "pw:with:colons");
  EXPECT_EQ(basic.describe().find("pw"), std::string::npos);
  auto bearer = load_push_auth("", env_of({{"GPUSCOPE_PUSH_BEARER_TOKEN", "tok"}}));
  EXPECT_EQ(bearer.kind, PushAuth::Kind::Bearer);
  EXPECT_EQ(bearer.secret, "tok");
  EXPECT_THROW(load_push_auth("", env_of({{"GPUSCOPE_PUSH_USER", "vm"}})), Error);
}

TEST(PushAuthTest, FromFile) {
  gpuscope::testing::TempDir dir;
  const std::string path = dir.file("auth");
  std::ofstream(path) << "basic alice:s3cret\n";
  auto auth = load_push_auth(path, env_of({}));
  EXPECT_EQ(auth.user, "alice");
  EXPECT_EQ(auth.secret, "s3cret");
  std::ofstream(path) << "bearer  abc.def \n";
  auth = load_push_auth("", env_of({{"GPUSCOPE_PUSH_AUTH_FILE", path}}));
  EXPECT_EQ(auth.kind, PushAuth::Kind::Bearer);
  EXPECT_EQ(auth.secret, "abc.def");
}

TEST(PushAuthTest, RefusesMalformedFilesWithoutQuotingThem) {
  gpuscope::testing::TempDir dir;
  const std::string path = dir.file("auth");
  std::ofstream(path) << "s3cret-token-without-scheme\n";
  try {
    load_push_auth(path, env_of({}));
    ADD_FAILURE() << "a malformed file was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_EQ(std::string(e.what()).find("s3cret"), std::string::npos);
  }
  EXPECT_THROW(load_push_auth(dir.file("missing"), env_of({})), Error);
  EXPECT_THROW(load_push_auth(path, env_of({{"GPUSCOPE_PUSH_BEARER_TOKEN", "t"}})), Error);
}

// --push-cert, --push-key, --push-ca: checked before anything starts, the error naming the option
// and the file.
std::string tls_error(const PushTls& tls) {
  return testing::usage_refusal([&] { check_push_tls(tls); });
}

// Before: only the password itself was blanked, so a proxy echoing the basic auth header
// (base64 of user:password) had it printed in the push's warning.
TEST(PushAuthTest, CredentialsEchoedByAProxyAreBlanked) {
  gpuscope::testing::EchoProxy proxy;
  PushAuth basic;
  basic.kind = PushAuth::Kind::Basic;
  basic.user = "alice";
  basic.secret = "pa/ss#word";
  const PushResult r = CurlTransport(proxy.url(), basic).post("up 1\n");
  EXPECT_EQ(r.outcome, PushResult::Outcome::Retry);
  EXPECT_NE(r.detail.find("HTTP 502: upstream refused: Authorization: Basic [secret]"),
            std::string::npos)
      << r.detail;
  EXPECT_EQ(r.detail.find(util::base64("alice:pa/ss#word")), std::string::npos) << r.detail;
  PushAuth bearer;
  bearer.kind = PushAuth::Kind::Bearer;
  bearer.secret = "t0ken-s3cret";
  const PushResult b = CurlTransport(proxy.url(), bearer).post("up 1\n");
  EXPECT_NE(b.detail.find("Authorization: Bearer [secret]"), std::string::npos) << b.detail;
  EXPECT_EQ(b.detail.find("t0ken-s3cret"), std::string::npos) << b.detail;
}

// Before: a server's words went into the push's warning with their control bytes.
TEST(PushAuthTest, ServerWordsAreShownNotSentToTheTerminal) {
  gpuscope::testing::EchoProxy proxy("\x1b[31mred\x07 ");
  const PushResult r = CurlTransport(proxy.url(), PushAuth{}).post("up 1\n");
  EXPECT_NE(r.detail.find("HTTP 502: \\x1b[31mred\\x07"), std::string::npos) << r.detail;
  EXPECT_EQ(r.detail.find_first_of("\x1b\x07"), std::string::npos) << r.detail;
}

TEST(PushTlsTest, ReadablePemFilesPass) {
  testing::TempDir dir;
  std::ofstream(dir.file("cert.pem")) << "-----BEGIN CERTIFICATE-----\nMIIB\n-----END "
                                         "CERTIFICATE-----\n";
  std::ofstream(dir.file("key.pem")) << "-----BEGIN PRIVATE KEY-----\nMIIE\n";
  EXPECT_EQ(tls_error({}), "");
  EXPECT_EQ(tls_error({dir.file("cert.pem"), dir.file("key.pem"), dir.file("cert.pem")}), "");
  EXPECT_EQ(tls_error({dir.file("cert.pem"), "", ""}), "");  // the key in the certificate's file
  EXPECT_EQ(tls_error({"", "", dir.file("cert.pem")}), "");
}

TEST(PushTlsTest, MissingUnreadableOrNotPemIsSaidWithTheFile) {
  testing::TempDir dir;
  const std::string missing = dir.file("missing.pem");
  std::string said = tls_error({missing, "", ""});
  EXPECT_NE(said.find("--push-cert " + missing + " cannot be read"), std::string::npos) << said;
  EXPECT_NE(said.find("No such file"), std::string::npos) << said;
  said = tls_error({"", "", dir.path()});
  EXPECT_NE(said.find("--push-ca " + dir.path() + " cannot be read"), std::string::npos) << said;
  std::ofstream(dir.file("der.crt")) << std::string("\x30\x82\x01\x0a", 4);
  said = tls_error({"", "", dir.file("der.crt")});
  EXPECT_NE(said.find("--push-ca " + dir.file("der.crt") + " is not a PEM file"), std::string::npos)
      << said;
}

TEST(PushTlsTest, AKeyWithoutItsCertificateIsRefused) {
  testing::TempDir dir;
  std::ofstream(dir.file("key.pem")) << "-----BEGIN PRIVATE KEY-----\n";
  const std::string said = tls_error({"", dir.file("key.pem"), ""});
  EXPECT_NE(said.find("--push-key is given without --push-cert"), std::string::npos) << said;
  EXPECT_NE(said.find("add --push-cert FILE"), std::string::npos) << said;
}

}  // namespace
}  // namespace gpuscope::exporter
