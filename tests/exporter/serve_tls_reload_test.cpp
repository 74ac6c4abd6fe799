// `gpuscope serve --web-config` with TLS, against a real serve, curl and certificates made by
// openssl: a certificate replaced by a FIFO (a botched rotation) stopped the exporter for good,
// its event loop waiting in OpenSSL's open of the FIFO. The files are now re-read off the event
// loop, opened without blocking, regular files only: the previous certificate stays served, the
// reason is said, and a good replacement is taken afterwards.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "support/ports.hpp"
#include "support/process.hpp"
#include "support/programs.hpp"

namespace gpuscope::testing {
namespace {

class ServeTlsReload : public ::testing::Test {
 protected:
  void SetUp() override {
    if (find_program("openssl").empty() || find_program("curl").empty()) {
      GTEST_SKIP() << "openssl and curl are needed";
    }
  }

  // A self-signed certificate for 127.0.0.1 named `name`, in NAME.crt and NAME.key.
  void make_cert(const std::string& name, const std::string& subject) {
    const auto made =
        run_process({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                     dir_.file(name + ".key"), "-out", dir_.file(name + ".crt"), "-days", "30",
                     "-subj", "/CN=" + subject, "-addext", "subjectAltName=IP:127.0.0.1"});
    ASSERT_EQ(made.exit_code, 0) << made.err;
    chmod(dir_.file(name + ".key").c_str(), 0600);
  }

  // The HTTP status of GET /healthz over TLS ("000": none within 5 s) and the subject of the
  // certificate served (curl -v's "subject:" line).
  std::pair<std::string, std::string> scrape() {
    const auto r =
        run_process({"curl", "-sk", "-v", "--max-time", "5", "-o", "/dev/null", "-w",
                     "%{http_code}", "https://127.0.0.1:" + std::to_string(port_) + "/healthz"});
    std::string subject;
    if (const auto at = r.err.find("subject: "); at != std::string::npos) {
      subject = r.err.substr(at + 9, r.err.find('\n', at) - at - 9);
    }
    return {r.out, subject};
  }

  std::string log() const { return read_file(dir_.file("serve.err")); }

  TempDir dir_;
  int port_ = 0;
};

TEST_F(ServeTlsReload, ACertificateReplacedByAFifoKeepsThePreviousOneServed) {
  make_cert("one", "exporter one");
  make_cert("two", "exporter two");
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(std::rename(dir_.file("one.crt").c_str(), dir_.file("server.crt").c_str()), 0);
  ASSERT_EQ(std::rename(dir_.file("one.key").c_str(), dir_.file("server.key").c_str()), 0);
  std::ofstream(dir_.file("web.yml"))
      << "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n";
  port_ = free_port();
  auto serve = start_gpuscope(
      {"serve", "--simulate", "h100", "--listen", "127.0.0.1:" + std::to_string(port_),
       "--interval", "200", "--web-config", dir_.file("web.yml")},
      simulated_node_env(dir_.file("state.json")), dir_.file("serve.out"), dir_.file("serve.err"));
  ASSERT_TRUE(eventually([&] { return scrape().first == "200"; }, std::chrono::seconds(60)))
      << log();
  EXPECT_EQ(scrape().second, "CN=exporter one");

  // The rotation goes wrong: a FIFO takes the certificate's place. Connections keep coming (the
  // old code looked at the files when one arrived, on the event loop).
  ASSERT_EQ(mkfifo(dir_.file("fifo").c_str(), 0600), 0);
  ASSERT_EQ(std::rename(dir_.file("fifo").c_str(), dir_.file("server.crt").c_str()), 0);
  const bool said = eventually(
      [&] {
        scrape();
        return log().find("a FIFO, not a regular file") != std::string::npos;
      },
      std::chrono::seconds(30));
  EXPECT_TRUE(said) << log();
  EXPECT_NE(log().find("the previous certificate is still served"), std::string::npos) << log();
  const auto during = scrape();
  EXPECT_EQ(during.first, "200") << "the exporter stopped answering";
  EXPECT_EQ(during.second, "CN=exporter one");

  // A good certificate and key replace the FIFO: taken within seconds.
  ASSERT_EQ(std::rename(dir_.file("two.key").c_str(), dir_.file("server.key").c_str()), 0);
  ASSERT_EQ(std::rename(dir_.file("two.crt").c_str(), dir_.file("server.crt").c_str()), 0);
  EXPECT_TRUE(
      eventually([&] { return scrape().second == "CN=exporter two"; }, std::chrono::seconds(30)))
      << log();
  EXPECT_NE(log().find("server.crt re-read"), std::string::npos) << log();

  // It still stops on SIGTERM, its event loop free (the exited process waits as a zombie).
  serve->signal(SIGTERM);
  const std::string stat = "/proc/" + std::to_string(serve->pid()) + "/stat";
  const bool exited = eventually(
      [&] {
        const std::string text = read_file(stat);
        const auto paren = text.rfind(')');
        return paren != std::string::npos && text.compare(paren, 3, ") Z") == 0;
      },
      std::chrono::seconds(30));
  ASSERT_TRUE(exited) << "serve did not stop on SIGTERM: " << log();
  EXPECT_EQ(serve->wait(), 0) << log();
}

// At start, a FIFO in the certificate's place is refused with the reason, not waited on.
TEST_F(ServeTlsReload, AFifoAtStartIsRefusedNotWaitedOn) {
  make_cert("one", "exporter one");
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(mkfifo(dir_.file("server.crt").c_str(), 0600), 0);
  std::ofstream(dir_.file("web.yml"))
      << "tls_server_config:\n  cert_file: server.crt\n  key_file: one.key\n";
  const auto result =
      run_process({"timeout", "-s", "KILL", "60", GPUSCOPE_TEST_BINARY, "serve", "--simulate",
                   "h100", "--listen", "127.0.0.1:" + std::to_string(free_port()), "--web-config",
                   dir_.file("web.yml")},
                  simulated_node_env(dir_.file("state.json")));
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("cannot read the certificate"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("a FIFO, not a regular file"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace gpuscope::testing
