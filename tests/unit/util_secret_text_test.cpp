// util/secret_text: credentials blanked in what a server or a proxy echoes back, and in URLs.
#include <gtest/gtest.h>

#include "util/secret_text.hpp"

namespace gpuscope::util {
namespace {

TEST(SecretText, Base64AsHttpBasicAuthSendsIt) {
  EXPECT_EQ(base64("alice:s3cret"), "YWxpY2U6czNjcmV0");
  EXPECT_EQ(base64("a"), "YQ==");
  EXPECT_EQ(base64("ab"), "YWI=");
  EXPECT_EQ(base64(""), "");
}

TEST(SecretText, SecretsAndEchoedAuthorizationHeadersAreBlanked) {
  const std::vector<std::string> basic = {"alice:s3cret", "s3cret"};
  const std::string echoed =
      "bad gateway; request was: POST /api/v1/query\r\nAuthorization: Basic YWxpY2U6czNjcmV0\r\n";
  const std::string said = redact_secrets(echoed, basic);
  EXPECT_EQ(said.find("YWxpY2U6czNjcmV0"), std::string::npos) << said;
  EXPECT_NE(said.find("Authorization: Basic [secret]\r"), std::string::npos) << said;
  EXPECT_EQ(redact_secrets("Authorization: Bearer tok]", {"tok"}),
            "Authorization: Bearer [secret]]");
  EXPECT_EQ(redact_secrets("Authorization: Bearer tok\n", {"tok"}),
            "Authorization: Bearer [secret]\n");
  // A header of a token gpuscope does not know, in JSON, in any case.
  EXPECT_EQ(redact_secrets(R"({"headers":{"authorization":["Bearer xyz.abc"]}})", {}),
            R"({"headers":{"authorization":["Bearer [secret]"]}})");
  EXPECT_EQ(redact_secrets("PROXY-AUTHORIZATION=tok123&x=1", {}),
            "PROXY-AUTHORIZATION=[secret]&x=1");
  // The secret itself wherever it is; words that merely mention authorization stay.
  EXPECT_EQ(redact_secrets("token t0k-en was refused", {"t0k-en"}), "token [secret] was refused");
  EXPECT_EQ(redact_secrets("authorization failed for user bob", {}),
            "authorization failed for user bob");
  EXPECT_EQ(redact_secrets("", {"x"}), "");
}

TEST(SecretText, CredentialsInUrlsHoweverSpelled) {
  for (const char* url : {"http://alice:s3cret@host:9090", "HTTP://alice:s3cret@host:9090",
                          "ftp://alice:s3cret@host", "http://alice:s3/cret@host:9090",
                          "http://alice:s3#cret@host:9090", "https://alice:s3?cret@host",
                          "alice:s3cret@host:9090", "hTtPs://alice:s3@cret@host/prefix"}) {
    EXPECT_TRUE(url_has_credentials(url)) << url;
    const std::string shown = url_without_credentials(url);
    EXPECT_EQ(shown.find("s3"), std::string::npos) << shown;
    EXPECT_EQ(shown.find("alice"), std::string::npos) << shown;
    EXPECT_NE(shown.find("[credentials]@"), std::string::npos) << shown;
  }
  EXPECT_EQ(url_without_credentials("HTTP://alice:s3/cret@host:9090/p"),
            "HTTP://[credentials]@host:9090/p");
  EXPECT_FALSE(url_has_credentials("http://host:9090/select/0/prometheus"));
  EXPECT_EQ(url_without_credentials("http://host:9090"), "http://host:9090");
}

}  // namespace
}  // namespace gpuscope::util
