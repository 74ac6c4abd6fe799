// `gpuscope serve --web-config` with basic_auth_users against a real serve over real sockets:
// a flood of wrong passwords from one client address does not slow the scrapes of another
// (password checks run on worker threads, checked pairs are remembered, a client's checks are
// bounded), and a hash whose cost would keep serve inside crypt for hours is refused at start.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "support/ports.hpp"
#include "support/process.hpp"

namespace gpuscope::testing {
namespace {

// bcrypt of "hunter2" at cost 14: about a second of a core per check.
constexpr const char* kCost14 = "$2b$14$fgKTERx0PDVZFEa5t0GyC.B7.QK6A873zJhP5jc21zHQxQg/BEqZG";

std::string base64(const std::string& in) {
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned bits = 0;
  int count = 0;
  for (const char c : in) {
    bits = (bits << 8) | static_cast<unsigned char>(c);
    count += 8;
    while (count >= 6) {
      count -= 6;
      out.push_back(alphabet[(bits >> count) & 63U]);
    }
  }
  if (count > 0) out.push_back(alphabet[(bits << (6 - count)) & 63U]);
  while (out.size() % 4 != 0) out.push_back('=');
  return out;
}

struct Answer {
  int status = -1;  // -1: no answer within the time allowed
  double seconds = 0;
  std::string body;
};

// One GET over a fresh connection from the loopback address `from` (127.0.0.1, 127.0.0.2: the
// server sees two clients), with basic credentials when `user` is not empty.
Answer get(const char* from, int port, const std::string& path, const std::string& user,
           const std::string& password, int timeout_s) {
  const auto started = std::chrono::steady_clock::now();
  Answer answer;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return answer;
  timeval timeout{timeout_s, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in source{};
  source.sin_family = AF_INET;
  inet_pton(AF_INET, from, &source.sin_addr);
  sockaddr_in server{};
  server.sin_family = AF_INET;
  server.sin_port = htons(static_cast<std::uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &server.sin_addr);
  std::string request = "GET " + path + " HTTP/1.1\r\nHost: test\r\nConnection: close\r\n";
  if (!user.empty()) request += "Authorization: Basic " + base64(user + ":" + password) + "\r\n";
  request += "\r\n";
  if (bind(fd, reinterpret_cast<sockaddr*>(&source), sizeof(source)) == 0 &&
      connect(fd, reinterpret_cast<sockaddr*>(&server), sizeof(server)) == 0 &&
      send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size())) {
    std::string text;
    char buffer[65536];
    ssize_t got = 0;
    while ((got = recv(fd, buffer, sizeof(buffer), 0)) > 0) {
      text.append(buffer, static_cast<std::size_t>(got));
    }
    if (got == 0 && text.rfind("HTTP/1.1 ", 0) == 0) {
      answer.status = std::stoi(text.substr(9, 3));
      const auto body = text.find("\r\n\r\n");
      if (body != std::string::npos) answer.body = text.substr(body + 4);
    }
  }
  close(fd);
  answer.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return answer;
}

class ServeAuth : public ::testing::Test {
 protected:
  // Starts serve with a web config holding `yaml`; returns when it listens (any answer).
  void start(const std::string& yaml) {
    std::ofstream(dir_.file("web.yml")) << yaml;
    port_ = free_port();
    serve_ = start_gpuscope(
        {"serve", "--simulate", "h100", "--listen", "127.0.0.1:" + std::to_string(port_),
         "--interval", "200", "--web-config", dir_.file("web.yml")},
        simulated_node_env(dir_.file("state.json")), dir_.file("serve.out"),
        dir_.file("serve.err"));
    for (int i = 0; i < 600; ++i) {
      if (get("127.0.0.1", port_, "/healthz", "", "", 5).status == 401) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    FAIL() << "serve never answered: " << read_file(dir_.file("serve.err"));
  }

  // `count` connections from 127.0.0.2, each sending wrong passwords (a new one each time, so
  // none is remembered) one request after another until `stop`.
  struct Flood {
    std::atomic<bool> stop{false};
    std::atomic<int> busy{0};        // answered 503: refused without a check
    std::atomic<int> unexpected{0};  // answered neither 401 nor 503
    std::vector<std::thread> threads;
    void end() {
      stop = true;
      for (auto& t : threads) t.join();
    }
  };
  void hammer(int count, Flood& flood) {
    for (int t = 0; t < count; ++t) {
      flood.threads.emplace_back([this, t, &flood] {
        for (int n = 0; !flood.stop; ++n) {
          const auto a = get("127.0.0.2", port_, "/metrics", "prometheus",
                             "wrong-" + std::to_string(t) + "-" + std::to_string(n), 30);
          if (a.status == 503) {
            ++flood.busy;
          } else if (a.status != 401) {
            ++flood.unexpected;
          }
          // A pause after each answer, so that quick refusals do not run the test's own
          // ephemeral ports out: 800 requests a second at most.
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
      });
    }
  }

  TempDir dir_;
  int port_ = 0;
  std::unique_ptr<BackgroundProcess> serve_;
};

std::string users(const char* hash) {
  return std::string("basic_auth_users:\n  prometheus: '") + hash + "'\n";
}

// Before, bcrypt ran on the event loop: with 8 connections sending wrong passwords at cost 14,
// each authorised scrape waited ~8 s behind their checks. Now the loop never runs bcrypt, and a
// pair checked once is answered from memory: the scrapes stay fast (the bound is generous: they
// take milliseconds).
TEST_F(ServeAuth, ScrapesStayFastWhileWrongPasswordsHammer) {
  start(users(kCost14));
  ASSERT_FALSE(HasFailure());
  const Answer first = get("127.0.0.1", port_, "/metrics", "prometheus", "hunter2", 30);
  ASSERT_EQ(first.status, 200) << read_file(dir_.file("serve.err"));

  Flood flood;
  hammer(8, flood);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the flood under way
  double slowest = 0;
  std::string page;
  for (int i = 0; i < 10; ++i) {
    const Answer a = get("127.0.0.1", port_, "/metrics", "prometheus", "hunter2", 10);
    EXPECT_EQ(a.status, 200) << "scrape " << i << " after " << a.seconds << " s";
    slowest = std::max(slowest, a.seconds);
    page = a.body;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  flood.end();
  EXPECT_LT(slowest, 3.0) << "an authorised scrape waited behind the wrong passwords' checks";
  EXPECT_EQ(flood.unexpected.load(), 0) << "a wrong password was answered other than 401 or 503";
  EXPECT_NE(page.find("gpuscope_power_watts{"), std::string::npos);
  EXPECT_NE(page.find("gpuscope_exporter_auth_checks_total "), std::string::npos);
}

// A scraper whose password is not yet remembered still gets its check while another client
// floods: that client's checks are bounded (2 queued or running), so the queue has room, and its
// excess is refused at once (503) instead of queued for ever.
TEST_F(ServeAuth, AFirstScrapeIsCheckedWhileAnotherClientFloods) {
  start(users(kCost14));
  ASSERT_FALSE(HasFailure());
  Flood flood;
  hammer(8, flood);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const Answer a = get("127.0.0.1", port_, "/metrics", "prometheus", "hunter2", 30);
  flood.end();
  EXPECT_EQ(a.status, 200);
  // Checked behind at most the flood's two (a second each, on two workers), then its own.
  EXPECT_LT(a.seconds, 6.0) << "the first scrape waited behind the flood";
  EXPECT_GT(flood.busy.load(), 0) << "the flooding client's excess was not refused at once";
  EXPECT_EQ(flood.unexpected.load(), 0);
}

// A $2b$31$ hash kept serve inside crypt at start (the probe), deaf to SIGTERM and not
// listening, for about 36 hours. It is refused at once, with the reason.
TEST_F(ServeAuth, AnAbsurdCostIsRefusedAtStartWithTheReason) {
  std::ofstream(dir_.file("web.yml"))
      << users("$2b$31$Op5SFcQ5f2eSg0qIIoZQr.2ynrR/GJrq5qMYFo9RTTvxxSOhmog3C");
  const auto result =
      run_process({"timeout", "-s", "KILL", "60", GPUSCOPE_TEST_BINARY, "serve", "--simulate",
                   "h100", "--listen", "127.0.0.1:" + std::to_string(free_port()), "--web-config",
                   dir_.file("web.yml")},
                  simulated_node_env(dir_.file("state.json")));
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("the hash of prometheus has cost 31, outside 4 to 14"),
            std::string::npos)
      << result.err;
}

// A key written twice let the last one win without a word: a second tls_server_config (or
// client_auth_type) switched mutual TLS off. serve refuses the file, naming the key.
TEST_F(ServeAuth, AKeyGivenTwiceIsRefusedAtStart) {
  std::ofstream(dir_.file("web.yml"))
      << "tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n"
         "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n"
         "tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n";
  const auto result = run_gpuscope(
      {"serve", "--simulate", "h100", "--listen", "127.0.0.1:" + std::to_string(free_port()),
       "--web-config", dir_.file("web.yml")},
      simulated_node_env(dir_.file("state.json")));
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("tls_server_config is given twice"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace gpuscope::testing
