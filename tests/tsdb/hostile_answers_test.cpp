// Answers no real server sends, from a stand-in server on loopback (cpp-httplib) and by hand:
// nesting deep enough to overflow a recursive copy, status fields of the wrong JSON kind, an odd
// VictoriaMetrics flag, an export that streams past the cap of one answer, and series without
// samples past a read's limit. Each must end in gpuscope's message, never a crash, an internal
// error or a read without end.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "core/error.hpp"
#include "support/refusal.hpp"
#include "tsdb/answer.hpp"
#include "tsdb/client.hpp"
#include "tsdb/pieces.hpp"

namespace gpuscope::tsdb {
namespace {

class StandIn {
 public:
  explicit StandIn(const std::function<void(httplib::Server&)>& routes) {
    routes(server_);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~StandIn() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

ClientOptions options_at(const std::string& url) {
  ClientOptions o;
  o.url = url;
  o.url_from = "the test";
  o.timeout = std::chrono::milliseconds(10'000);
  o.retry.base_wait_s = 0.01;
  return o;
}

using gpuscope::testing::refusal_message;

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

// {"a":{"a":...}} nested `depth` levels (100,000: 200 KB of text).
std::string nested(std::size_t depth) {
  std::string out;
  out.reserve(depth * 6 + 8);
  for (std::size_t i = 0; i < depth; ++i) out += R"({"a":)";
  out += "1";
  out.append(depth, '}');
  return out;
}

std::string matrix_with_metric(const std::string& metric) {
  return R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":)" + metric +
         R"(,"values":[[1,"2"]]}]}})";
}

// Before the fix the answer was parsed into a document and "metric" copied with
// item.value("metric", json::object()), which recursed 100,000 deep: a segfault.
TEST(HostileAnswers, AMetricNested100000DeepIsRefusedNotACrash) {
  try {
    query_answer(answer_document(matrix_with_metric(nested(100'000))));
    ADD_FAILURE() << "taken";
  } catch (const AnswerShapeError& e) {
    EXPECT_HAS(e.what, "nests deeper than 32 levels");
  }
  EXPECT_THROW(
      export_line(R"({"metric":)" + nested(100'000) + R"(,"values":[1],"timestamps":[1]})"),
      AnswerShapeError);
  EXPECT_THROW(
      series_answer(answer_document(R"({"status":"success","data":[)" + nested(100'000) + "]}")),
      AnswerShapeError);
  // Nesting where the answer keeps nothing is refused all the same.
  EXPECT_THROW(answer_document(R"({"status":"success","extra":)" + nested(100'000) + "}"),
               AnswerShapeError);
  // The API's own depth (6) and a little more stay accepted.
  EXPECT_EQ(query_answer(answer_document(matrix_with_metric(R"({"a":"b"})"))).series.size(), 1u);
  EXPECT_NO_THROW(answer_document(R"({"status":"success","extra":)" + nested(20) + "}"));
}

TEST(HostileAnswers, ADeepAnswerThroughTheClientIsAnUnknownShape) {
  StandIn server([](httplib::Server& s) {
    s.Post("/api/v1/query_range", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(matrix_with_metric(nested(100'000)), "application/json");
    });
  });
  auto o = options_at(server.url());
  o.max_points_per_series = 1000;
  Client client(o);
  const std::string m = refusal_message([&] { client.range("up", Window{0, 60'000}, 1000); });
  EXPECT_HAS(m, "answered /api/v1/query_range with something else than the Prometheus API's JSON");
  EXPECT_HAS(m, "the answer nests deeper than 32 levels");
}

// buildinfo's "version" and the flags' values are strings in the API; a number there was
// nlohmann's type_error.302, an "internal error ... please report it".
TEST(HostileAnswers, NumbersWhereTheStatusEndpointsWriteTextAreAnUnknownShape) {
  for (const bool in_flags : {false, true}) {
    StandIn server([&](httplib::Server& s) {
      s.Get("/api/v1/status/buildinfo", [&](const httplib::Request&, httplib::Response& res) {
        res.set_content(in_flags ? R"({"status":"success","data":{"version":"2.53.0"}})"
                                 : R"({"status":"success","data":{"version":2.53}})",
                        "application/json");
      });
      s.Get("/api/v1/status/flags", [&](const httplib::Request&, httplib::Response& res) {
        res.set_content(
            in_flags
                ? R"({"status":"success","data":{"storage.tsdb.retention.time":15,"query.max-samples":"50000000"}})"
                : R"({"status":"success","data":{"storage.tsdb.retention.time":"15d"}})",
            "application/json");
      });
    });
    const std::string m = refusal_message([&] { Client(options_at(server.url())).server(); });
    EXPECT_HAS(m, in_flags ? "answered /api/v1/status/flags in an unknown shape"
                           : "answered /api/v1/status/buildinfo in an unknown shape");
    EXPECT_HAS(m, in_flags ? R"("storage.tsdb.retention.time" is a number, not a string)"
                           : R"("version" is a number, not a string)");
  }
}

TEST(HostileAnswers, ADeeplyNestedStatusAnswerIsAnUnknownShape) {
  StandIn server([](httplib::Server& s) {
    s.Get("/api/v1/status/buildinfo", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"status":"success","data":{"version":)" + nested(100'000) + "}}",
                      "application/json");
    });
  });
  const std::string m = refusal_message([&] { Client(options_at(server.url())).server(); });
  EXPECT_HAS(m, "answered /api/v1/status/buildinfo in an unknown shape");
  EXPECT_HAS(m, "nests deeper than 32 levels");
}

// A VictoriaMetrics: /api/v1/status/flags refused in its words, its flags in /metrics.
void victoria_metrics(httplib::Server& s, const std::string& max_points) {
  s.Get("/api/v1/status/flags", [](const httplib::Request&, httplib::Response& res) {
    res.status = 400;
    res.set_content("unsupported path requested: \"/api/v1/status/flags\"", "text/plain");
  });
  s.Get("/metrics", [max_points](const httplib::Request&, httplib::Response& res) {
    res.set_content(
        "vm_app_version{version=\"victoria-metrics-v1.99.0\", short_version=\"v1.99.0\"} 1\n"
        "flag{name=\"retentionPeriod\", value=\"100y\", is_set=\"true\"} 1\n"
        "flag{name=\"search.maxPointsPerTimeseries\", value=\"" +
            max_points + "\", is_set=\"true\"} 1\n",
        "text/plain");
  });
}

// "2.5" was taken as more than 2 and cut to 2 points, less the 2 VictoriaMetrics may add: pieces
// of no point, no query sent, and the job's error blamed "the folder or file given".
TEST(HostileAnswers, AnOddMaxPointsFlagIsSaidNotAQueryOfNoPieces) {
  std::atomic<int> queries{0};
  for (const std::string value : {"2.5", "2", "many"}) {
    StandIn server([&](httplib::Server& s) {
      victoria_metrics(s, value);
      s.Post("/api/v1/query_range", [&](const httplib::Request&, httplib::Response& res) {
        ++queries;
        res.set_content(R"({"status":"success","data":{"resultType":"matrix","result":[]}})",
                        "application/json");
      });
    });
    const std::string m = refusal_message([&] {
      Client(options_at(server.url())).range("up", Window{0, 60'000}, 1000);
    });
    EXPECT_HAS(m, "-search.maxPointsPerTimeseries is \"" + value + "\"");
    EXPECT_HAS(m, "not a whole number of points above 2");
  }
  EXPECT_EQ(queries.load(), 0);
  StandIn normal([&](httplib::Server& s) {
    victoria_metrics(s, "30000");
    s.Post("/api/v1/query_range", [&](const httplib::Request&, httplib::Response& res) {
      ++queries;
      res.set_content(R"({"status":"success","data":{"resultType":"matrix","result":[]}})",
                      "application/json");
    });
  });
  Client client(options_at(normal.url()));
  EXPECT_EQ(client.range_piece_points(), 29'998);
  EXPECT_TRUE(client.range("up", Window{0, 60'000}, 1000).empty());
  EXPECT_EQ(queries.load(), 1);
}

// The export streams to a sink, to which the cap of one answer did not apply: 3 MiB of series
// without samples (and so under any sample limit) came through a 1 MiB cap.
TEST(HostileAnswers, AnExportPastTheCapOfOneAnswerStops) {
  std::string lines;
  for (int i = 0; lines.size() < (std::size_t{3} << 20); ++i) {
    lines += R"({"metric":{"__name__":"p","g":")" + std::to_string(i) +
             R"("},"values":[],"timestamps":[]})" + "\n";
  }
  StandIn server([&](httplib::Server& s) {
    victoria_metrics(s, "30000");
    s.Post("/api/v1/export", [&](const httplib::Request&, httplib::Response& res) {
      res.set_content(lines, "application/stream+json");
    });
  });
  auto o = options_at(server.url());
  o.max_body = std::size_t{1} << 20;
  const std::string m = refusal_message([&] {
    Client(o).raw(R"({__name__="p"})", Window{0, 60'000}, 100'000'000);
  });
  EXPECT_HAS(m, "answered /api/v1/export with more than 1 MiB");
  EXPECT_HAS(m, "ask for a shorter window or fewer series");
  // Under the cap, the same lines are read.
  o.max_body = std::size_t{16} << 20;
  EXPECT_EQ(refusal_message([&] {
              Client(o).raw(R"({__name__="p"})", Window{0, 60'000}, 100'000'000);
            }),
            "no error");
}

// Series without samples cost their labels: before the fix a read of a million of them passed
// a limit of 3 samples.
TEST(HostileAnswers, SeriesWithoutSamplesCountAgainstTheLimit) {
  SeriesJoiner joiner(3, "`p`");
  joiner.add(Series{{{"g", "0"}}, {}});
  joiner.add(Series{{{"g", "1"}}, {}});
  joiner.add(Series{{{"g", "2"}}, {{1, 1}}});
  try {
    joiner.add(Series{{{"g", "3"}}, {}});
    ADD_FAILURE() << "a fourth series was held";
  } catch (const Error& e) {
    EXPECT_HAS(std::string(e.what()), "more than 3 samples would come back for `p`");
    EXPECT_HAS(std::string(e.what()), "a series without samples counts as one");
  }
  SeriesJoiner full(3, "`p`");
  full.add(Series{{{"g", "0"}}, {{1, 1}, {2, 2}, {3, 3}}});  // exactly the limit: held
  EXPECT_EQ(full.take().at(0).points.size(), 3u);
}

}  // namespace
}  // namespace gpuscope::tsdb
