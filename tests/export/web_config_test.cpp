// The web config (exporter-toolkit's format) and basic authentication: what each key does, and
// the error that names a key or value gpuscope does not take.
#include "export/web_config.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/error.hpp"
#include "export/basic_auth.hpp"

namespace gpuscope::exporter {
namespace {

// bcrypt of "hunter2" at cost 4 (16 rounds), made with the system's crypt library.
constexpr const char* kHash = "$2b$04$pedeqbPZXaD0nuKTEmWk1u6O3sure8qifxljFvlH9nhHWnYfFsuX6";

std::string error_of(const std::string& yaml) {
  try {
    parse_web_config(yaml, "/etc/gpuscope/web.yml");
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    return e.what();
  }
  return "no error";
}

TEST(WebConfig, NodeExportersFileWorksUnchanged) {
  const auto c = parse_web_config(
      "tls_server_config:\n"
      "  cert_file: node.crt\n"
      "  key_file: /abs/node.key\n"
      "  client_auth_type: RequireAndVerifyClientCert\n"
      "  client_ca_file: ca.crt\n"
      "  min_version: TLS13\n"
      "  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, "
      "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256]\n"
      "  curve_preferences: [X25519, CurveP256]\n"
      "  prefer_server_cipher_suites: false\n"
      "http_server_config:\n"
      "  http2: true\n"
      "  headers:\n"
      "    X-Frame-Options: deny\n"
      "basic_auth_users:\n"
      "  prometheus: " +
          std::string(kHash) + "\n",
      "/etc/gpuscope/web.yml");
  ASSERT_TRUE(c.tls.has_value());
  EXPECT_EQ(c.tls->cert_file,
            "/etc/gpuscope/node.crt");  // relative to the file, as exporter-toolkit
  EXPECT_EQ(c.tls->key_file, "/abs/node.key");
  EXPECT_EQ(c.tls->client_ca_file, "/etc/gpuscope/ca.crt");
  EXPECT_EQ(c.tls->client_auth, ClientAuth::RequireAndVerifyClientCert);
  EXPECT_EQ(c.tls->min_version, 0x0304);
  EXPECT_EQ(c.tls->cipher_list, "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305");
  EXPECT_EQ(c.tls->groups, "X25519:P-256");
  EXPECT_FALSE(c.tls->prefer_server_cipher_suites);
  ASSERT_EQ(c.headers.size(), 1U);
  EXPECT_EQ(c.headers[0].first, "X-Frame-Options");
  EXPECT_EQ(c.basic_auth_users.at("prometheus"), kHash);
}

TEST(WebConfig, AnEmptyFileIsPlainHttp) {
  const auto c = parse_web_config("", "web.yml");
  EXPECT_FALSE(c.tls.has_value());
  EXPECT_TRUE(c.basic_auth_users.empty());
}

TEST(WebConfig, EveryKeyItDoesNotTakeIsAnErrorNamingIt) {
  EXPECT_NE(error_of("tls_server_confg: {}\n").find("unknown key tls_server_confg"),
            std::string::npos);
  EXPECT_NE(error_of("tls_server_config: {cert_file: a, key_file: b, cert_fiel: c}\n")
                .find("unknown key tls_server_config.cert_fiel"),
            std::string::npos);
  EXPECT_NE(error_of("http_server_config: {keepalive: true}\n")
                .find("unknown key http_server_config.keepalive"),
            std::string::npos);
  EXPECT_NE(error_of("tls_server_config: {cert: x, key_file: b}\n").find("inline PEM"),
            std::string::npos);
  EXPECT_NE(error_of("tls_server_config: {cert_file: a, key_file: b, client_allowed_sans: [x]}\n")
                .find("client_allowed_sans is not supported"),
            std::string::npos);
}

TEST(WebConfig, BadValuesSayWhatIsAllowed) {
  EXPECT_NE(error_of("tls_server_config: [cert_file\n")
                .find("not YAML (line 2, column 1: end of sequence flow not found)"),
            std::string::npos);
  EXPECT_NE(error_of("- a\n- b\n").find("must be a YAML mapping"), std::string::npos);
  EXPECT_NE(error_of("tls_server_config: {key_file: b}\n").find("no cert_file"), std::string::npos);
  EXPECT_NE(error_of("tls_server_config: {cert_file: a}\n").find("no key_file"), std::string::npos);
  EXPECT_NE(error_of("tls_server_config: {cert_file: a, key_file: b, min_version: TLS14}\n")
                .find("'TLS14' is not a TLS version"),
            std::string::npos);
  EXPECT_NE(error_of("tls_server_config: {cert_file: a, key_file: b, min_version: TLS13, "
                     "max_version: TLS12}\n")
                .find("max_version is older"),
            std::string::npos);
  EXPECT_NE(error_of("tls_server_config: {cert_file: a, key_file: b, client_auth_type: Maybe}\n")
                .find("'Maybe' is not a client authentication type"),
            std::string::npos);
  EXPECT_NE(error_of("tls_server_config: {cert_file: a, key_file: b, client_auth_type: "
                     "RequireAndVerifyClientCert}\n")
                .find("no client_ca_file"),
            std::string::npos);
  EXPECT_NE(error_of("tls_server_config: {cert_file: a, key_file: b, client_ca_file: ca}\n")
                .find("client_ca_file is set without a client_auth_type"),
            std::string::npos);
  EXPECT_NE(error_of("tls_server_config: {cert_file: a, key_file: b, cipher_suites: "
                     "[TLS_RSA_WITH_RC4_128_SHA]}\n")
                .find("TLS_RSA_WITH_RC4_128_SHA is not one gpuscope can offer"),
            std::string::npos);
  EXPECT_NE(error_of("tls_server_config: {cert_file: a, key_file: b, curve_preferences: [P256]}\n")
                .find("P256 is not a curve"),
            std::string::npos);
  EXPECT_NE(error_of("http_server_config: {headers: {Server: gpuscope}}\n")
                .find("header Server may not be set"),
            std::string::npos);
  EXPECT_NE(error_of("http_server_config: {headers: {X-Frame-Options: allow}}\n")
                .find("'allow' is not allowed"),
            std::string::npos);
  EXPECT_NE(error_of("http_server_config: {http2: maybe}\n").find("true or false"),
            std::string::npos);
}

TEST(WebConfig, APasswordInPlaceOfAHashIsRefusedWithoutEchoingIt) {
  const std::string e = error_of("basic_auth_users:\n  prometheus: my-plain-password\n");
  EXPECT_NE(e.find("the password of prometheus is not a bcrypt hash"), std::string::npos) << e;
  EXPECT_EQ(e.find("my-plain-password"), std::string::npos) << e;
  EXPECT_NE(
      error_of("basic_auth_users:\n  'a:b': " + std::string(kHash) + "\n").find("not a user name"),
      std::string::npos);
}

TEST(WebConfig, Tls13SuitesAreNotedAsAlwaysOn) {
  const auto c = parse_web_config(
      "tls_server_config: {cert_file: a, key_file: b, cipher_suites: [TLS_AES_128_GCM_SHA256]}\n",
      "web.yml");
  ASSERT_EQ(c.notes.size(), 1U);
  EXPECT_NE(c.notes[0].find("always enabled"), std::string::npos);
  EXPECT_TRUE(c.tls->cipher_list.empty());
}

TEST(BasicAuthorization, HeaderIsParsedTheWayRfc7617Says) {
  // "prometheus:hunter2" in base64; the scheme is case-insensitive; a ':' in the password stays.
  auto c = parse_basic_authorization("Basic cHJvbWV0aGV1czpodW50ZXIy");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->first, "prometheus");
  EXPECT_EQ(c->second, "hunter2");
  c = parse_basic_authorization("basic YTpiOmM=");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->first, "a");
  EXPECT_EQ(c->second, "b:c");
  EXPECT_FALSE(parse_basic_authorization("Bearer abc").has_value());
  EXPECT_FALSE(parse_basic_authorization("Basic !!!").has_value());
  EXPECT_FALSE(parse_basic_authorization("Basic YWJj").has_value());  // "abc": no ':'
  EXPECT_FALSE(parse_basic_authorization("").has_value());
}

TEST(BasicAuth, RightWrongUnknownAndMissingCredentials) {
  BasicAuth auth(std::map<std::string, std::string>{{"prometheus", kHash}});
  EXPECT_EQ(auth.check("Basic cHJvbWV0aGV1czpodW50ZXIy"), BasicAuth::Verdict::Allowed);
  EXPECT_EQ(auth.check("Basic cHJvbWV0aGV1czpodW50ZXIy"),
            BasicAuth::Verdict::Allowed);                                              // remembered
  EXPECT_EQ(auth.check("Basic cHJvbWV0aGV1czpodW50ZXIz"), BasicAuth::Verdict::Wrong);  // hunter3
  EXPECT_EQ(auth.check("Basic b3RoZXI6aHVudGVyMg=="), BasicAuth::Verdict::Wrong);  // other:hunter2
  EXPECT_EQ(auth.check(nullptr), BasicAuth::Verdict::Missing);
  EXPECT_EQ(auth.check("Bearer x"), BasicAuth::Verdict::Missing);
  EXPECT_EQ(auth.failures(), 4U);
}

TEST(BasicAuth, AFloodOfWrongPasswordsIsThrottledNotChecked) {
  BasicAuth auth(std::map<std::string, std::string>{{"prometheus", kHash}});
  int throttled = 0;
  for (int i = 0; i < 40; ++i) {
    throttled += auth.check("Basic cHJvbWV0aGV1czpodW50ZXIz") == BasicAuth::Verdict::Throttled;
  }
  EXPECT_GE(throttled, 20);  // at most 16 checks a second
  EXPECT_EQ(auth.failures(), 40U);
}

}  // namespace
}  // namespace gpuscope::exporter
