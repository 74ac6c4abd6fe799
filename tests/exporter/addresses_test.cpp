// --listen and --push: what is accepted, what is refused and how.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "exporter/listen_address.hpp"
#include "exporter/push_url.hpp"
#include "support/refusal.hpp"

namespace gpuscope::exporter {
namespace {

using gpuscope::testing::refusal;

TEST(ListenAddressTest, ParsesHostPortForms) {
  auto a = parse_listen_address("127.0.0.1:9400");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 9400);
  EXPECT_TRUE(a.loopback());
  a = parse_listen_address("9500");
  EXPECT_EQ(a.text(), "127.0.0.1:9500");  // loopback unless told otherwise
  a = parse_listen_address(":9401");
  EXPECT_EQ(a.host, "127.0.0.1");
  a = parse_listen_address("0.0.0.0:9400");
  EXPECT_FALSE(a.loopback());
  a = parse_listen_address("[::1]:9400");
  EXPECT_EQ(a.host, "::1");
  EXPECT_EQ(a.text(), "[::1]:9400");
}

TEST(ListenAddressTest, RefusesMalformedAddresses) {
  for (const char* bad : {"", "127.0.0.1:", "127.0.0.1:http", "host:70000", "::1:9400", "[::1]"}) {
    const Error e = refusal([&] { parse_listen_address(bad); });
    EXPECT_EQ(e.exit_code(), 2) << bad;
    EXPECT_NE(std::string(e.what()).find("HOST:PORT"), std::string::npos) << bad;
  }
}

TEST(PushUrlTest, AppendsTheImportPathWhenMissing) {
  EXPECT_EQ(parse_push_url("http://127.0.0.1:8428").url,
            "http://127.0.0.1:8428/api/v1/import/prometheus");
  EXPECT_EQ(parse_push_url("http://127.0.0.1:8428/").url,
            "http://127.0.0.1:8428/api/v1/import/prometheus");
  EXPECT_EQ(parse_push_url("https://vm.example/insert/0/prometheus").url,
            "https://vm.example/insert/0/prometheus/api/v1/import/prometheus");
  EXPECT_EQ(parse_push_url("http://h:1/api/v1/import/prometheus").url,
            "http://h:1/api/v1/import/prometheus");
}

TEST(PushUrlTest, RefusesMalformedUrlsAndCredentials) {
  for (const char* bad : {"", "not a url", "ftp://h/", "http://", "localhost:8428x"}) {
    EXPECT_EQ(refusal([&] { parse_push_url(bad); }).exit_code(), 2) << bad;
  }
  // Before: an upper-case or other scheme, or a '/' or '#' in the password, made libcurl refuse
  // the URL for another reason and the message quoted it whole.
  for (const char* url :
       {"http://alice:s3cret@127.0.0.1:8428", "HTTP://alice:s3cret@127.0.0.1:8428",
        "ftp://alice:s3cret@h/", "http://alice:s3/cret@h:8428", "http://alice:s3#cret@h:8428"}) {
    const Error secret = refusal([&] { parse_push_url(url); });
    EXPECT_EQ(std::string(secret.what()).find("s3"), std::string::npos) << secret.what();
    EXPECT_NE(std::string(secret.what()).find("GPUSCOPE_PUSH_USER"), std::string::npos) << url;
  }
}

}  // namespace
}  // namespace gpuscope::exporter
