// --listen and --push: what is accepted, what is refused and how.
#include <gtest/gtest.h>

#include "export/listen_address.hpp"
#include "export/push_url.hpp"

namespace gpuscope::exporter {
namespace {

TEST(ListenAddressTest, ParsesHostPortForms) {
  auto a = parse_listen_address("127.0.0.1:9400");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 9400);
  EXPECT_TRUE(a->loopback());
  a = parse_listen_address("9500");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->text(), "127.0.0.1:9500");  // loopback unless told otherwise
  a = parse_listen_address(":9401");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "127.0.0.1");
  a = parse_listen_address("0.0.0.0:9400");
  ASSERT_TRUE(a);
  EXPECT_FALSE(a->loopback());
  a = parse_listen_address("[::1]:9400");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "::1");
  EXPECT_EQ(a->text(), "[::1]:9400");
}

TEST(ListenAddressTest, RefusesMalformedAddresses) {
  for (const char* bad : {"", "127.0.0.1:", "127.0.0.1:http", "host:70000", "::1:9400", "[::1]"}) {
    const auto a = parse_listen_address(bad);
    ASSERT_FALSE(a) << bad;
    EXPECT_EQ(a.error().exit_code(), 2);
    EXPECT_NE(std::string(a.error().what()).find("HOST:PORT"), std::string::npos);
  }
}

TEST(PushUrlTest, AppendsTheImportPathWhenMissing) {
  EXPECT_EQ(parse_push_url("http://127.0.0.1:8428")->url,
            "http://127.0.0.1:8428/api/v1/import/prometheus");
  EXPECT_EQ(parse_push_url("http://127.0.0.1:8428/")->url,
            "http://127.0.0.1:8428/api/v1/import/prometheus");
  EXPECT_EQ(parse_push_url("https://vm.example/insert/0/prometheus")->url,
            "https://vm.example/insert/0/prometheus/api/v1/import/prometheus");
  EXPECT_EQ(parse_push_url("http://h:1/api/v1/import/prometheus")->url,
            "http://h:1/api/v1/import/prometheus");
}

TEST(PushUrlTest, RefusesMalformedUrlsAndCredentials) {
  for (const char* bad : {"", "not a url", "ftp://h/", "http://", "localhost:8428x"}) {
    const auto t = parse_push_url(bad);
    ASSERT_FALSE(t) << bad;
    EXPECT_EQ(t.error().exit_code(), 2);
  }
  const auto secret = parse_push_url("http://alice:s3cret@127.0.0.1:8428");
  ASSERT_FALSE(secret);
  EXPECT_EQ(std::string(secret.error().what()).find("s3cret"), std::string::npos);
  EXPECT_NE(std::string(secret.error().what()).find("GPUSCOPE_PUSH_USER"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::exporter
