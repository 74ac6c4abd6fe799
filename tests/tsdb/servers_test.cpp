// tsdb::Client against a real VictoriaMetrics (samples pushed with /api/v1/import/prometheus)
// and a real Prometheus (the same samples backfilled by promtool): the servers told apart, every
// read compared exactly with what was stored and between the two servers, range queries past
// the points-per-series limits split, and basic auth. Skips only when a binary is absent.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <map>

#include "core/error.hpp"
#include "real_servers.hpp"
#include "support/temp_dir.hpp"
#include "tsdb/client.hpp"

namespace gpuscope::tsdb {
namespace {

using namespace testing;
using gpuscope::testing::TempDir;

constexpr std::int64_t kT0 = 1'704'067'200'000;  // 2024-01-01T00:00:00Z
constexpr std::int64_t kStep = 15'000;
constexpr int kShortSamples = 240;  // 1 h at 15 s
constexpr int kLongSamples = 960;   // 4 h at 15 s

// What was stored: 4 GPUs of `gpu_util` for 1 h, one `gpu_power` for 4 h.
std::vector<Series> stored() {
  std::vector<Series> out;
  for (int gpu = 0; gpu < 4; ++gpu) {
    Series s{{{"__name__", "gpu_util"}, {"gpu", std::to_string(gpu)}, {"host", "n1"}}, {}};
    for (int i = 0; i < kShortSamples; ++i) {
      s.points.push_back({kT0 + i * kStep, (i * 7 + gpu * 13) % 101 + 0.25});
    }
    out.push_back(s);
  }
  Series power{{{"__name__", "gpu_power"}, {"gpu", "0"}, {"host", "n1"}}, {}};
  for (int i = 0; i < kLongSamples; ++i) power.points.push_back({kT0 + i * kStep, 100 + i * 0.5});
  out.push_back(power);
  return out;
}

std::string labels_text(const Labels& labels) {
  std::string out;
  for (const auto& [k, v] : labels) {
    if (k == "__name__") continue;
    out += (out.empty() ? "" : ",") + k + "=\"" + v + "\"";
  }
  return "{" + out + "}";
}

std::string prometheus_text(const std::vector<Series>& series) {
  std::string out;
  for (const auto& s : series) {
    for (const auto& p : s.points) {
      out += s.name() + labels_text(s.labels) + " " + fmt::format("{}", p.value) + " " +
             std::to_string(p.t_ms) + "\n";
    }
  }
  return out;
}

std::string openmetrics_text(const std::vector<Series>& series) {
  std::string out;
  std::string family;
  for (const auto& s : series) {
    if (s.name() != family) out += "# TYPE " + (family = s.name()) + " gauge\n";
    for (const auto& p : s.points) {
      out += s.name() + labels_text(s.labels) + " " + fmt::format("{}", p.value) + " " +
             fmt::format("{}.{:03d}", p.t_ms / 1000, p.t_ms % 1000) + "\n";
    }
  }
  return out + "# EOF\n";
}

std::map<Labels, std::vector<Point>> by_labels(const std::vector<Series>& series) {
  std::map<Labels, std::vector<Point>> out;
  for (const auto& s : series) out[s.labels] = s.points;
  return out;
}

void expect_same(const std::vector<Series>& got, const std::vector<Series>& want) {
  const auto g = by_labels(got);
  const auto w = by_labels(want);
  ASSERT_EQ(g.size(), w.size());
  for (const auto& [labels, points] : w) {
    const auto it = g.find(labels);
    ASSERT_NE(it, g.end()) << labels_text(labels);
    ASSERT_EQ(it->second.size(), points.size()) << labels_text(labels);
    for (std::size_t i = 0; i < points.size(); ++i) {
      ASSERT_EQ(it->second[i].t_ms, points[i].t_ms) << labels_text(labels) << " #" << i;
      ASSERT_EQ(it->second[i].value, points[i].value) << labels_text(labels) << " #" << i;
    }
  }
}

std::vector<Series> only(const std::vector<Series>& series, const std::string& name) {
  std::vector<Series> out;
  for (const auto& s : series) {
    if (s.name() == name) out.push_back(s);
  }
  return out;
}

ClientOptions at(const std::string& url) {
  ClientOptions o;
  o.url = url;
  o.url_from = "the test";
  return o;
}

class Servers : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    vm_ = start_victoria_metrics(dir_->path()).release();
    if (vm_ != nullptr) {
      import_into_victoria_metrics(vm_->port(), prometheus_text(stored()));
      Client client(at(vm_->url()));
      eventually([&] {
        return client.raw("{host=\"n1\"}", Window{kT0, kT0 + 4 * 3600'000}, 1'000'000).size() == 5;
      });
    }
    const std::string data = dir_->file("prometheus-data");
    if (backfill_prometheus(openmetrics_text(stored()), data, dir_->path())) {
      prometheus_ = start_prometheus(dir_->path(), data).release();
    }
  }
  static void TearDownTestSuite() {
    delete vm_;
    delete prometheus_;
    delete dir_;
  }
  void SetUp() override {
    if (vm_ == nullptr) GTEST_SKIP() << "victoria-metrics is not installed";
    if (prometheus_ == nullptr) GTEST_SKIP() << "prometheus or promtool is not installed";
  }

  static inline TempDir* dir_ = nullptr;
  static inline RealServer* vm_ = nullptr;
  static inline RealServer* prometheus_ = nullptr;
};

TEST_F(Servers, TellsTheServersApart) {
  Client vm(at(vm_->url()));
  const ServerInfo v = vm.server();
  EXPECT_EQ(v.kind, ServerKind::VictoriaMetrics);
  ASSERT_TRUE(v.retention_s);
  EXPECT_EQ(*v.retention_s, 100 * 365 * 86400.0);
  EXPECT_EQ(vm.range_piece_points(), 30'000 - 2);
  Client prometheus(at(prometheus_->url()));
  const ServerInfo p = prometheus.server();
  EXPECT_EQ(p.kind, ServerKind::Prometheus);
  EXPECT_EQ(p.version.rfind("2.", 0), 0u) << p.version;
  ASSERT_TRUE(p.retention_s);
  EXPECT_EQ(*p.retention_s, 100 * 365 * 86400.0);
  EXPECT_EQ(prometheus.range_piece_points(), 11'000);
  const std::size_t asked = prometheus.requests().value();
  prometheus.server();
  EXPECT_EQ(prometheus.requests().value(), asked);  // cached
}

TEST_F(Servers, RawReadsAreExactAndEqualOnBothServers) {
  const Window window{kT0, kT0 + 4 * 3600'000};
  Client vm(at(vm_->url()));
  Client prometheus(at(prometheus_->url()));
  ClientOptions small = at(prometheus_->url());
  small.raw_piece_samples = 500;  // many pieces: boundary samples must be dropped once
  Client prometheus_in_pieces(small);
  const auto from_vm = vm.raw("{host=\"n1\"}", window, 1'000'000);
  const auto from_prometheus = prometheus.raw("{host=\"n1\"}", window, 1'000'000);
  const auto in_pieces = prometheus_in_pieces.raw("{host=\"n1\"}", window, 1'000'000);
  expect_same(from_vm, stored());
  expect_same(from_prometheus, stored());
  expect_same(in_pieces, stored());
  EXPECT_GT(prometheus_in_pieces.requests().value(), prometheus.requests().value() + 5);
  // A window inside the data: both ends included.
  const Window inner{kT0 + 10 * kStep, kT0 + 20 * kStep};
  for (Client* c : {&vm, &prometheus}) {
    const auto part = c->raw("gpu_util{gpu=\"1\"}", inner, 1000);
    ASSERT_EQ(part.size(), 1u);
    ASSERT_EQ(part[0].points.size(), 11u);
    EXPECT_EQ(part[0].points.front().t_ms, inner.start_ms);
    EXPECT_EQ(part[0].points.back().t_ms, inner.end_ms);
  }
}

TEST_F(Servers, RawReadsPastMaxPointsFail) {
  const Window window{kT0, kT0 + 4 * 3600'000};
  for (const auto& url : {vm_->url(), prometheus_->url()}) {
    Client client(at(url));
    try {
      client.raw("{host=\"n1\"}", window, 1000);
      ADD_FAILURE() << "no Error from " << url;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("more than 1000 samples would come back"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST_F(Servers, ABadSelectorSaysTheServersWords) {
  const Window window{kT0, kT0 + 3600'000};
  try {
    Client(at(vm_->url())).raw("gpu_util{", window, 1000);
    ADD_FAILURE() << "no Error";
  } catch (const Error& e) {
    // The export's error answer is kept whole, not streamed as export lines.
    EXPECT_NE(std::string(e.what()).find("answered HTTP 400 to /api/v1/export of gpu_util{"),
              std::string::npos)
        << e.what();
  }
  try {
    Client(at(prometheus_->url())).raw("gpu_util{", window, 1000);
    ADD_FAILURE() << "no Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Prometheus at " + prometheus_->url() +
                                         " refused /api/v1/series of `gpu_util{` (bad_data: "),
              std::string::npos)
        << e.what();
  }
}

TEST_F(Servers, SeriesAndInstantQueries) {
  for (const auto& url : {vm_->url(), prometheus_->url()}) {
    Client client(at(url));
    auto labels = client.series("gpu_util", Window{kT0, kT0 + 3600'000});
    ASSERT_EQ(labels.size(), 4u) << url;
    std::sort(labels.begin(), labels.end());
    EXPECT_EQ(labels[3].at("gpu"), "3");
    const std::int64_t at_time = kT0 + 100 * kStep;
    const auto vector = client.instant("sum(gpu_util)", at_time);
    ASSERT_EQ(vector.size(), 1u) << url;
    double sum = 0;
    for (int gpu = 0; gpu < 4; ++gpu) sum += (100 * 7 + gpu * 13) % 101 + 0.25;
    EXPECT_EQ(vector[0].points.at(0).value, sum) << url;
    EXPECT_EQ(vector[0].points.at(0).t_ms, at_time);
    const auto scalar = client.instant("scalar(sum(gpu_util)) * 2", at_time);
    ASSERT_EQ(scalar.size(), 1u);
    EXPECT_EQ(scalar[0].points.at(0).value, 2 * sum) << url;
    const auto matrix = client.instant("gpu_power[1m]", kT0 + 10 * kStep);
    ASSERT_EQ(matrix.size(), 1u);
    EXPECT_GE(matrix[0].points.size(), 4u) << url;
    EXPECT_EQ(matrix[0].points.back().value, 105) << url;
    try {
      client.instant("sum(", at_time);
      ADD_FAILURE() << "no Error from " << url;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("refused /api/v1/query of `sum(`"), std::string::npos)
          << e.what();
    }
  }
}

// At a 15 s step on the samples' times, a range query gives the samples themselves.
TEST_F(Servers, RangeAtTheSampleStepEqualsTheSamples) {
  const auto want = only(stored(), "gpu_power");
  const Window window{kT0, kT0 + (kLongSamples - 1) * kStep};
  ClientOptions o = at(vm_->url());
  o.max_points_per_series = 100;  // ten pieces
  Client vm(o);
  auto got = vm.range("gpu_power", window, kStep);
  ASSERT_EQ(got.size(), 1u);
  got[0].labels.erase("__name__");  // VictoriaMetrics keeps the name of a bare selector
  auto expected = want;
  expected[0].labels.erase("__name__");
  expect_same(got, expected);
  Client prometheus(at(prometheus_->url()));
  auto from_prometheus = prometheus.range("gpu_power", window, kStep);
  for (auto& s : from_prometheus) s.labels.erase("__name__");
  expect_same(from_prometheus, expected);
}

// 14,386 steps of 1 s: past Prometheus' 11,000 points per series, so two pieces; every point
// is the latest sample at or before it.
TEST_F(Servers, PrometheusRangePastElevenThousandStepsIsSplit) {
  const Window window{kT0, kT0 + (kLongSamples - 1) * kStep};
  const auto check = [&](Client& client) {
    const auto got = client.range("gpu_power", window, 1000);
    ASSERT_EQ(got.size(), 1u);
    const auto& points = got[0].points;
    ASSERT_EQ(points.size(), 14'386u);
    for (std::size_t i = 0; i < points.size(); ++i) {
      ASSERT_EQ(points[i].t_ms, kT0 + static_cast<std::int64_t>(i) * 1000);
      ASSERT_EQ(points[i].value, 100 + static_cast<double>(i / 15) * 0.5) << i;
    }
  };
  Client prometheus(at(prometheus_->url()));
  check(prometheus);
  EXPECT_EQ(prometheus.requests().value(), 3u + 2u);  // buildinfo, flags, runtimeinfo; two pieces
  // Told a limit above Prometheus' own, the client meets its refusal and splits further.
  ClientOptions o = at(prometheus_->url());
  o.max_points_per_series = 20'000;
  Client forced(o);
  check(forced);
  EXPECT_EQ(forced.requests().value(), 3u);  // one refused, two halves
}

TEST(ServersAuth, VictoriaMetricsBasicAuth) {
  TempDir dir;
  auto vm = start_victoria_metrics(dir.path(), {"-httpAuth.username=gpu", "-httpAuth.password=pw"});
  if (!vm) GTEST_SKIP() << "victoria-metrics is not installed";
  import_into_victoria_metrics(vm->port(), prometheus_text(only(stored(), "gpu_power")), "gpu:pw");
  Site site;
  site.url = vm->url();
  site.url_from = "the test";
  try {
    Client(client_options(site)).raw("gpu_power", Window{kT0, kT0 + 3600'000}, 1000);
    ADD_FAILURE() << "no Error without credentials";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("refused the credentials (HTTP 401)"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("sent: no credentials"), std::string::npos) << e.what();
  }
  site.basic_auth_file = dir.file("auth");
  std::ofstream(site.basic_auth_file) << "gpu:pw\n";
  chmod(site.basic_auth_file.c_str(), 0600);
  Client client(client_options(site));
  std::vector<Series> got;
  ASSERT_TRUE(eventually([&] {
    got = client.raw("gpu_power", Window{kT0, kT0 + 4 * 3600'000}, 10'000);
    return !got.empty();
  }));
  expect_same(got, only(stored(), "gpu_power"));
  EXPECT_EQ(client.server().kind, ServerKind::VictoriaMetrics);
}

}  // namespace
}  // namespace gpuscope::tsdb
