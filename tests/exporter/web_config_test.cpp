// The web config (exporter-toolkit's format) and basic authentication: what each key does, and
// the error that names a key or value gpuscope does not take.
#include "exporter/web_config.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "exporter/basic_auth.hpp"
#include "exporter/sha256.hpp"
#include "support/refusal.hpp"

namespace gpuscope::exporter {
namespace {

// bcrypt of "hunter2" at cost 4 (16 rounds), made with the system's crypt library.
constexpr const char* kHash = "$2b$04$pedeqbPZXaD0nuKTEmWk1u6O3sure8qifxljFvlH9nhHWnYfFsuX6";

std::string error_of(const std::string& yaml) {
  return testing::usage_refusal([&] { parse_web_config(yaml, "/etc/gpuscope/web.yml"); });
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

TEST(WebConfig, AKeyGivenTwiceIsRefusedAtEveryLevel) {
  // yaml-cpp keeps both entries; reading them in turn let the last one win without a word.
  const std::string tls = "tls_server_config: {cert_file: a, key_file: b}\n";
  EXPECT_NE(error_of(tls + tls).find("tls_server_config is given twice"), std::string::npos);
  EXPECT_NE(error_of("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: c\n"
                     "  client_auth_type: RequireAndVerifyClientCert\n"
                     "  client_auth_type: NoClientCert\n")
                .find("tls_server_config.client_auth_type is given twice"),
            std::string::npos);
  EXPECT_NE(error_of("http_server_config: {http2: true, http2: false}\n")
                .find("http_server_config.http2 is given twice"),
            std::string::npos);
  EXPECT_NE(error_of("http_server_config: {headers: {X-Frame-Options: deny, X-Frame-Options: "
                     "sameorigin}}\n")
                .find("http_server_config.headers.X-Frame-Options is given twice"),
            std::string::npos);
  EXPECT_NE(error_of("basic_auth_users:\n  p: " + std::string(kHash) +
                     "\n  p: " + std::string(kHash) + "\n")
                .find("basic_auth_users.p is given twice"),
            std::string::npos);
  EXPECT_NE(error_of("basic_auth_users: {}\nbasic_auth_users: {}\n").find("given twice"),
            std::string::npos);
}

TEST(WebConfig, ABcryptCostOutsideTheBoundIsRefusedWithTheReason) {
  // A $2b$31$ hash kept serve inside crypt at start, deaf to SIGTERM, for about 36 hours.
  std::string hash(kHash);
  hash.replace(4, 2, "31");
  std::string e = error_of("basic_auth_users:\n  prometheus: " + hash + "\n");
  EXPECT_NE(e.find("the hash of prometheus has cost 31, outside 4 to 14"), std::string::npos) << e;
  EXPECT_NE(e.find("htpasswd -nBC 10 prometheus"), std::string::npos) << e;
  hash.replace(4, 2, "15");
  EXPECT_NE(error_of("basic_auth_users:\n  p: " + hash + "\n").find("has cost 15"),
            std::string::npos);
  hash.replace(4, 2, "03");
  EXPECT_NE(error_of("basic_auth_users:\n  p: " + hash + "\n").find("has cost 3"),
            std::string::npos);
  hash.replace(4, 2, "14");
  EXPECT_EQ(error_of("basic_auth_users:\n  p: " + hash + "\n"), "");
  EXPECT_EQ(bcrypt_cost(kHash), 4);
  EXPECT_EQ(bcrypt_cost("$2b$1x$pedeqbPZXaD0nuKTEmWk1u6O3sure8qifxljFvlH9nhHWnYfFsuX6"), -1);
  EXPECT_EQ(bcrypt_cost("$2b$10$pedeqbPZXaD0nuKTEmWk1u6O3sure8qifxljFvlH9nhHWnYfFsu!6"), -1);
  // BasicAuth, made without the parser, refuses it too.
  EXPECT_THROW(BasicAuth(std::map<std::string, std::string>{{"p", hash.replace(4, 2, "31")}}),
               Error);
}

TEST(Sha256, StandardVectors) {
  const auto hex = [](const Sha256Digest& d) {
    std::string out;
    for (const auto b : d) out += fmt::format("{:02x}", b);
    return out;
  };
  EXPECT_EQ(hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex(sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex(sha256(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // RFC 4231, test cases 2 and 6 (a key longer than a block).
  EXPECT_EQ(hex(hmac_sha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(hex(hmac_sha256(std::string(131, '\xaa'),
                            "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(BasicAuth, RightWrongUnknownAndMissingCredentials) {
  BasicAuth auth(std::map<std::string, std::string>{{"prometheus", kHash}});
  EXPECT_EQ(auth.check_now("Basic cHJvbWV0aGV1czpodW50ZXIy"), BasicAuth::Verdict::Allowed);
  EXPECT_EQ(auth.check_now("Basic cHJvbWV0aGV1czpodW50ZXIy"),
            BasicAuth::Verdict::Allowed);  // remembered
  EXPECT_EQ(auth.check_now("Basic cHJvbWV0aGV1czpodW50ZXIz"),
            BasicAuth::Verdict::Wrong);                                                // hunter3
  EXPECT_EQ(auth.check_now("Basic b3RoZXI6aHVudGVyMg=="), BasicAuth::Verdict::Wrong);  // other
  EXPECT_EQ(auth.check_now(nullptr), BasicAuth::Verdict::Missing);
  EXPECT_EQ(auth.check_now("Bearer x"), BasicAuth::Verdict::Missing);
  EXPECT_EQ(auth.failures(), 4U);
  EXPECT_EQ(auth.checks(), 3U);  // the second right one was remembered
}

TEST(BasicAuth, ACheckedPairCostsNoSecondCheckRightOrWrong) {
  BasicAuth auth(std::map<std::string, std::string>{{"prometheus", kHash}});
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(auth.check_now("Basic cHJvbWV0aGV1czpodW50ZXIy"), BasicAuth::Verdict::Allowed);
    EXPECT_EQ(auth.check_now("Basic cHJvbWV0aGV1czpodW50ZXIz"), BasicAuth::Verdict::Wrong);
  }
  EXPECT_EQ(auth.checks(), 2U);
  EXPECT_EQ(auth.failures(), 20U);
}

TEST(BasicAuth, ChecksRunOnWorkersAndAFullQueueIsRefusedAtOnce) {
  // Cost 12: a quarter of a second a check, far longer than queuing the next ones takes.
  const char* cost12 = "$2b$12$YQZUSLHqRFaoDDS0HPVPuu/kaPFK2xI7hd1BaK0ek2tnv8W8UVOw6";
  BasicAuthLimits limits;
  limits.workers = 1;
  limits.queue = 2;
  limits.per_client = 1;
  BasicAuth auth(std::map<std::string, std::string>{{"prometheus", cost12}}, limits);
  std::mutex mutex;
  std::vector<std::pair<BasicAuth::Verdict, std::thread::id>> later;
  const auto record = [&](BasicAuth::Verdict v) {
    std::lock_guard lock(mutex);
    later.emplace_back(v, std::this_thread::get_id());
  };
  const char* right = "Basic cHJvbWV0aGV1czpodW50ZXIy";
  const char* wrong = "Basic cHJvbWV0aGV1czpodW50ZXIz";
  EXPECT_EQ(auth.check(right, "10.0.0.1", record), BasicAuth::Verdict::Pending);
  EXPECT_EQ(auth.check(wrong, "10.0.0.1", record), BasicAuth::Verdict::Busy);  // its one slot
  EXPECT_EQ(auth.check(wrong, "10.0.0.2", record), BasicAuth::Verdict::Pending);
  EXPECT_EQ(auth.check(wrong, "10.0.0.3", record), BasicAuth::Verdict::Busy);  // queue full
  for (int i = 0; i < 1000; ++i) {  // two checks at cost 12: half a second
    {
      std::lock_guard lock(mutex);
      if (later.size() == 2) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  {
    std::lock_guard lock(mutex);
    ASSERT_EQ(later.size(), 2U);
    EXPECT_EQ(later[0].first, BasicAuth::Verdict::Allowed);
    EXPECT_NE(later[0].second, std::this_thread::get_id());  // on a worker thread
    EXPECT_EQ(later[1].first, BasicAuth::Verdict::Wrong);
  }
  EXPECT_EQ(auth.busy(), 2U);
  EXPECT_EQ(auth.checks(), 2U);
  // Stopping answers every check still queued, once.
  EXPECT_EQ(auth.check("Basic cHJvbWV0aGV1czp4", "10.0.0.1", record), BasicAuth::Verdict::Pending);
  EXPECT_EQ(auth.check("Basic cHJvbWV0aGV1czp5", "10.0.0.2", record), BasicAuth::Verdict::Pending);
  auth.stop();
  ASSERT_EQ(later.size(), 4U);
  EXPECT_NE(later[2].first, BasicAuth::Verdict::Allowed);
  EXPECT_NE(later[3].first, BasicAuth::Verdict::Allowed);
  EXPECT_EQ(auth.check(right, "10.0.0.1", record), BasicAuth::Verdict::Allowed);  // remembered
}

}  // namespace
}  // namespace gpuscope::exporter
