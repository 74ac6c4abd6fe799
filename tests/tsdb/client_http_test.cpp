// tsdb::Client against local stand-in servers (cpp-httplib and raw sockets, loopback only): the
// form it POSTs, the API prefix, credentials sent as a header, a limit error split further, and
// every way the network or the server can fail, each with the message a user gets.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/error.hpp"
#include "support/echo_proxy.hpp"
#include "support/refusal.hpp"
#include "tsdb/client.hpp"
#include "util/secret_text.hpp"

namespace gpuscope::tsdb {
namespace {

using nlohmann::json;

class FakeServer {
 public:
  explicit FakeServer(const std::function<void(httplib::Server&)>& routes) {
    routes(server_);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~FakeServer() {
    server_.stop();
    thread_.join();
  }
  std::string url(const std::string& prefix = "") const {
    return "http://127.0.0.1:" + std::to_string(port_) + prefix;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

// A socket that accepts connections and, for each, writes `reply` (or nothing) and then waits
// until the test ends: a server that never answers, or one that cuts its answer off.
class SilentServer {
 public:
  explicit SilentServer(std::string reply = {}) : reply_(std::move(reply)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    socklen_t length = sizeof(address);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    listen(fd_, 8);
    if (!reply_.empty()) {
      thread_ = std::thread([this] {
        const int client = accept(fd_, nullptr, nullptr);
        if (client < 0) return;
        char buffer[4096];
        (void)!read(client, buffer, sizeof(buffer));
        (void)!write(client, reply_.data(), reply_.size());
        close(client);  // the promised length never comes
      });
    }
  }
  ~SilentServer() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    if (thread_.joinable()) thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  std::string reply_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

std::string vector_answer(double value) {
  return json{{"status", "success"},
              {"data",
               {{"resultType", "vector"},
                {"result", json::array({{{"metric", {{"__name__", "up"}}},
                                         {"value", json::array({10, std::to_string(value)})}}})}}}}
      .dump();
}

ClientOptions options_at(const std::string& url) {
  ClientOptions o;
  o.url = url;
  o.url_from = "the test";
  o.timeout = std::chrono::milliseconds(3000);
  o.retry.base_wait_s = 0.01;
  return o;
}

using gpuscope::testing::refusal_message;

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(ClientHttp, PostsTheFormUnderThePrefix) {
  std::string method, query, time;
  FakeServer server([&](httplib::Server& s) {
    s.Post("/select/0/prometheus/api/v1/query",
           [&](const httplib::Request& req, httplib::Response& res) {
             method = req.method;
             query = req.get_param_value("query");
             time = req.get_param_value("time");
             res.set_content(vector_answer(4), "application/json");
           });
  });
  Client client(options_at(server.url("/select/0/prometheus/")));
  const std::string long_selector = "up{instance=~\"" + std::string(6000, 'a') + "\"}";
  const auto series = client.instant(long_selector, 1'704'067'200'123);
  EXPECT_EQ(method, "POST");
  EXPECT_EQ(query, long_selector);  // 6 kB: past what some proxies take in a URL
  EXPECT_EQ(time, "1704067200.123");
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].points.at(0).value, 4);
}

TEST(ClientHttp, BearerTokenGoesInTheAuthorizationHeader) {
  FakeServer server([](httplib::Server& s) {
    s.Post("/api/v1/query", [](const httplib::Request& req, httplib::Response& res) {
      if (req.get_header_value("Authorization") != "Bearer t0ken") {
        res.status = 401;
        res.set_content("Unauthorized", "text/plain");
        return;
      }
      res.set_content(vector_answer(1), "application/json");
    });
  });
  ClientOptions with = options_at(server.url());
  with.bearer_token = "t0ken";
  with.credentials_said = "the bearer token of /etc/token";
  EXPECT_EQ(Client(with).instant("up", 0).size(), 1u);
  ClientOptions wrong = with;
  wrong.bearer_token = "stale";
  const std::string refused = refusal_message([&] { Client(wrong).instant("up", 0); });
  EXPECT_HAS(refused, "refused the credentials (HTTP 401)");
  EXPECT_HAS(refused, "sent: the bearer token of /etc/token");
  EXPECT_EQ(refused.find("stale"), std::string::npos);  // never the secret
  EXPECT_HAS(refusal_message([&] { Client(options_at(server.url())).instant("up", 0); }),
             "sent: no credentials");
}

// Before: the error body's excerpt was printed as it came, token or base64 user:password in it.
TEST(ClientHttp, CredentialsEchoedByAProxyAreNeverPrinted) {
  gpuscope::testing::EchoProxy proxy;
  ClientOptions bearer = options_at(proxy.url());
  bearer.retry.max_attempts = 1;
  bearer.bearer_token = "t0ken-s3cret";
  std::string m = refusal_message([&] { Client(bearer).instant("up", 0); });
  EXPECT_HAS(m, "answered HTTP 502");
  EXPECT_HAS(m, "Authorization: Bearer [secret]");
  EXPECT_EQ(m.find("t0ken-s3cret"), std::string::npos) << m;

  ClientOptions basic = options_at(proxy.url());
  basic.retry.max_attempts = 1;
  basic.basic_auth = "alice:pa/ss#word";
  m = refusal_message([&] { Client(basic).instant("up", 0); });
  EXPECT_HAS(m, "Authorization: Basic [secret]");
  EXPECT_EQ(m.find(util::base64("alice:pa/ss#word")), std::string::npos) << m;
  EXPECT_EQ(m.find("pa/ss"), std::string::npos) << m;

  // A server's own error words that quote the token.
  FakeServer server([](httplib::Server& s) {
    s.Post("/api/v1/query", [](const httplib::Request& req, httplib::Response& res) {
      res.status = 400;
      res.set_content(json{{"status", "error"},
                           {"errorType", "bad_data"},
                           {"error", "unexpected " + req.get_header_value("Authorization")}}
                          .dump(),
                      "application/json");
    });
  });
  bearer.url = server.url();
  m = refusal_message([&] { Client(bearer).instant("up", 0); });
  EXPECT_HAS(m, "bad_data: unexpected Bearer [secret]");
  EXPECT_EQ(m.find("t0ken-s3cret"), std::string::npos) << m;
}

// Before: escape sequences and BEL in an error body, and a newline in a query error's words,
// went into the message as they came.
TEST(ClientHttp, ServerWordsAreShownNotSentToTheTerminal) {
  FakeServer server([](httplib::Server& s) {
    s.Post("/api/v1/query", [](const httplib::Request&, httplib::Response& res) {
      res.status = 503;
      res.set_content("down\x1b[2J\x07", "text/plain");
    });
    s.Post("/api/v1/query_range", [](const httplib::Request&, httplib::Response& res) {
      res.status = 400;
      res.set_content(json{{"status", "error"},
                           {"errorType", "bad_data"},
                           {"error", "x\ngpuscope: note: forged \x1b]0;t\x07"}}
                          .dump(),
                      "application/json");
    });
  });
  ClientOptions o = options_at(server.url());
  o.retry.max_attempts = 1;
  std::string m = refusal_message([&] { Client(o).instant("up", 0); });
  EXPECT_HAS(m, "down\\x1b[2J\\x07");
  EXPECT_EQ(m.find_first_of("\x1b\x07"), std::string::npos) << m;
  m = refusal_message([&] { Client(o).range("up", Window{0, 60'000}, 15'000); });
  EXPECT_HAS(m, "x\\ngpuscope: note: forged \\x1b]0;t\\x07");
  EXPECT_EQ(m.find_first_of("\n\x1b\x07"), std::string::npos) << m;
}

TEST(ClientHttp, ConnectionRefusedSaysTheUrl) {
  const std::string refused_url = "http://127.0.0.1:1";
  const std::string m = refusal_message([&] { Client(options_at(refused_url)).instant("up", 0); });
  EXPECT_HAS(m, "no answer from http://127.0.0.1:1/api/v1/query");
  EXPECT_HAS(m, "onnect");  // curl: "Couldn't connect to server"
  EXPECT_HAS(m, "from the test");
}

TEST(ClientHttp, NameNotResolved) {
  const std::string m = refusal_message(
      [&] { Client(options_at("http://no-such-host.invalid:9090")).instant("up", 0); });
  EXPECT_HAS(m, "no answer from http://no-such-host.invalid:9090/api/v1/query");
  EXPECT_HAS(m, "resolve");
}

TEST(ClientHttp, AServerThatNeverAnswersTimesOut) {
  SilentServer silent;
  ClientOptions o = options_at(silent.url());
  o.timeout = std::chrono::milliseconds(700);
  const std::string m = refusal_message([&] { Client(o).instant("up", 0); });
  EXPECT_HAS(m, "no answer from " + silent.url() + "/api/v1/query");
  EXPECT_HAS(m, "after 700 ms");
  EXPECT_HAS(m, "timeout");
}

TEST(ClientHttp, ACutOffAnswer) {
  SilentServer cut(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n"
      "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[");
  const std::string m = refusal_message([&] { Client(options_at(cut.url())).instant("up", 0); });
  EXPECT_HAS(m, "no answer from " + cut.url());
  EXPECT_HAS(m, "cut off");
}

TEST(ClientHttp, AnHtmlPageIsNotAnAnswer) {
  FakeServer server([](httplib::Server& s) {
    s.Post("/api/v1/query", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("<html><body>Sign in to continue</body></html>", "text/html");
    });
  });
  const std::string m = refusal_message([&] { Client(options_at(server.url())).instant("up", 0); });
  EXPECT_HAS(m, "something else than the Prometheus API's JSON");
  EXPECT_HAS(m, "text/html");
  EXPECT_HAS(m, "Sign in to continue");
  EXPECT_HAS(m, "login page");
}

TEST(ClientHttp, A503IsRetriedThenFails) {
  std::atomic<int> calls{0};
  FakeServer server([&](httplib::Server& s) {
    s.Post("/api/v1/query", [&](const httplib::Request&, httplib::Response& res) {
      ++calls;
      res.status = 503;
      res.set_content("overloaded", "text/plain");
    });
  });
  Client client(options_at(server.url()));
  const std::string m = refusal_message([&] { client.instant("up", 0); });
  EXPECT_EQ(calls.load(), 3);
  EXPECT_EQ(client.requests().value(), 3u);
  EXPECT_HAS(m, "answered HTTP 503 to /api/v1/query of up (overloaded)");
  EXPECT_HAS(m, "try again later");
}

TEST(ClientHttp, A503ThenAnAnswer) {
  std::atomic<int> calls{0};
  FakeServer server([&](httplib::Server& s) {
    s.Post("/api/v1/query", [&](const httplib::Request&, httplib::Response& res) {
      if (calls++ == 0) {
        res.status = 503;
        return;
      }
      res.set_content(vector_answer(2), "application/json");
    });
  });
  EXPECT_EQ(Client(options_at(server.url())).instant("up", 0).at(0).points.at(0).value, 2);
  EXPECT_EQ(calls.load(), 2);
}

TEST(ClientHttp, A404HintsAtTheApiPrefix) {
  FakeServer server([](httplib::Server&) {});
  const std::string m = refusal_message([&] { Client(options_at(server.url())).instant("up", 0); });
  EXPECT_HAS(m, "answered HTTP 404 to /api/v1/query");
  EXPECT_HAS(m, "/select/0/prometheus");
}

TEST(ClientHttp, AQueryErrorNamesTheQueryAndTheServersWords) {
  FakeServer server([](httplib::Server& s) {
    s.Post("/api/v1/query", [](const httplib::Request&, httplib::Response& res) {
      res.status = 400;
      res.set_content(
          R"({"status":"error","errorType":"bad_data","error":"1:5: parse error: unclosed left parenthesis"})",
          "application/json");
    });
  });
  const std::string m =
      refusal_message([&] { Client(options_at(server.url())).instant("foo(", 0); });
  EXPECT_HAS(m, "refused /api/v1/query of `foo(`");
  EXPECT_HAS(m, "bad_data: 1:5: parse error: unclosed left parenthesis");
}

// A range query refused past 100 points per series, as Prometheus refuses past 11,000: the
// client, told 1,000, is refused and halves its pieces until every point comes back.
TEST(ClientHttp, ARangeRefusedForALimitIsSplitFurther) {
  std::atomic<int> refused{0};
  FakeServer server([&](httplib::Server& s) {
    s.Post("/api/v1/query_range", [&](const httplib::Request& req, httplib::Response& res) {
      const double start = std::stod(req.get_param_value("start"));
      const double end = std::stod(req.get_param_value("end"));
      const double step = std::stod(req.get_param_value("step"));
      const auto points = static_cast<int>((end - start) / step + 1.5);
      if (points > 100) {
        ++refused;
        res.status = 400;
        res.set_content(
            R"j({"status":"error","errorType":"bad_data","error":"exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)"})j",
            "application/json");
        return;
      }
      json values = json::array();
      for (int i = 0; i < points; ++i) {
        const double t = start + i * step;
        values.push_back(json::array({t, std::to_string(t * 2)}));
      }
      res.set_content(
          json{{"status", "success"},
               {"data",
                {{"resultType", "matrix"},
                 {"result", json::array({{{"metric", {{"g", "0"}}}, {"values", values}}})}}}}
              .dump(),
          "application/json");
    });
  });
  ClientOptions o = options_at(server.url());
  o.max_points_per_series = 1000;
  Client client(o);
  const auto series = client.range("x", Window{0, 2'499'000}, 1000);  // 2,500 points
  ASSERT_EQ(series.size(), 1u);
  ASSERT_EQ(series[0].points.size(), 2500u);
  for (std::size_t i = 0; i < 2500; ++i) {
    ASSERT_EQ(series[0].points[i].t_ms, static_cast<std::int64_t>(i) * 1000);
    ASSERT_EQ(series[0].points[i].value, static_cast<double>(i) * 2);
  }
  EXPECT_GT(refused.load(), 0);

  o.max_splits = 2;  // gives up before pieces are small enough
  const std::string m = refusal_message([&] { Client(o).range("x", Window{0, 2'499'000}, 1000); });
  EXPECT_HAS(m, "exceeded maximum resolution of 11,000 points");
  EXPECT_HAS(m, "use a longer step");
}

// Raw samples through range selectors (Prometheus' path): a server that answers samples past
// the window's end (a clock far ahead, a bug) must not have them taken. Before the fix only the
// lower bound was filtered and the late sample (9,999 W) became the job's peak.
TEST(ClientHttp, RawSamplesOutsideTheWindowAreLeftOutAtBothEnds) {
  FakeServer server([&](httplib::Server& s) {
    s.Post("/api/v1/series", [&](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"status":"success","data":[{"__name__":"p","g":"0"}]})",
                      "application/json");
    });
    s.Post("/api/v1/query", [&](const httplib::Request&, httplib::Response& res) {
      // Whatever piece is asked: one sample before the window, two in it, one an hour after.
      res.set_content(
          R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"p","g":"0"},)"
          R"("values":[[999,"1"],[1000,"300"],[1010,"310"],[4610,"9999"]]}]}})",
          "application/json");
    });
  });
  Client client(options_at(server.url()));
  EXPECT_NE(client.server().kind, ServerKind::VictoriaMetrics);
  const auto series = client.raw(R"({__name__="p"})", Window{1'000'000, 1'060'000}, 1000);
  ASSERT_EQ(series.size(), 1u);
  ASSERT_EQ(series[0].points.size(), 2u);
  EXPECT_EQ(series[0].points[0].t_ms, 1'000'000);
  EXPECT_EQ(series[0].points[1].t_ms, 1'010'000);
  for (const auto& p : series[0].points) EXPECT_LT(p.value, 9999);
}

}  // namespace
}  // namespace gpuscope::tsdb
