// The UK Carbon Intensity API client against a local server (loopback only) that answers in the
// API's real shapes, and every way the API or the network can fail; then `gpuscope analyze
// --carbon-source uk` end to end: fetched, joined, stored in the run database, reused offline.
#include "carbon/uk_grid.hpp"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "carbon/series_file.hpp"
#include "core/error.hpp"
#include "support/process.hpp"
#include "support/sql.hpp"
#include "util/utc_time.hpp"

namespace gpuscope::carbon {
namespace {

using testing::run_gpuscope;
using testing::TempDir;
constexpr std::int64_t kS = 1'000'000'000;

// 30-minute periods from `first` (unix s): actual for the first `actual` of them, then forecast.
std::string national(std::int64_t first, int periods, int actual) {
  nlohmann::json data = nlohmann::json::array();
  for (int i = 0; i < periods; ++i) {
    auto t = [](std::int64_t s) {
      char buffer[32];
      const std::time_t tt = static_cast<std::time_t>(s);
      std::tm utc{};
      gmtime_r(&tt, &utc);
      std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%MZ", &utc);
      return std::string(buffer);
    };
    nlohmann::json intensity = {{"forecast", 200 + 10 * i}, {"index", "moderate"}};
    intensity["actual"] = i < actual ? nlohmann::json(100 + 10 * i) : nlohmann::json(nullptr);
    data.push_back({{"from", t(first + 1800 * i)},
                    {"to", t(first + 1800 * (i + 1))},
                    {"intensity", intensity}});
  }
  return nlohmann::json{{"data", data}}.dump();
}

// A local stand-in for api.carbonintensity.org.uk: the API's routes, plus /busy (429 once), /down
// (500), /slow (3 s), /garbage, /odd (JSON of another shape). It records the paths asked for.
class FakeApi {
 public:
  FakeApi() {
    server_.Get(R"(/intensity/([^/]+)/([^/]+))",
                [this](const httplib::Request& req, httplib::Response& res) {
                  paths_.push_back(req.path);
                  const auto from = util::parse_utc_time(req.matches[1].str());
                  const auto to = util::parse_utc_time(req.matches[2].str());
                  const auto first = *from / kS;
                  res.set_content(national(first, static_cast<int>((*to - *from) / kS / 1800), 2),
                                  "application/json");
                });
    server_.Get(R"(/regional/intensity/([^/]+)/([^/]+)/regionid/(\d+))",
                [this](const httplib::Request& req, httplib::Response& res) {
                  paths_.push_back(req.path);
                  const auto first = *util::parse_utc_time(req.matches[1].str()) / kS;
                  auto periods = nlohmann::json::parse(national(first, 2, 0))["data"];
                  for (auto& p : periods) p["intensity"].erase("actual");
                  // The regional endpoint answers `data` as an object, not a list.
                  const nlohmann::json answer = {{"data",
                                                  {{"regionid", std::stoi(req.matches[3].str())},
                                                   {"dnoregion", "SSE South"},
                                                   {"shortname", "South England"},
                                                   {"data", periods}}}};
                  res.set_content(answer.dump(), "application/json");
                });
    server_.Get(R"(/busy/intensity/([^/]+)/([^/]+))",
                [this](const httplib::Request& req, httplib::Response& res) {
                  if (busy_calls_++ == 0) {
                    res.status = 429;
                    res.set_header("Retry-After", "0");
                    return;
                  }
                  const auto first = *util::parse_utc_time(req.matches[1].str()) / kS;
                  res.set_content(national(first, 1, 1), "application/json");
                });
    server_.Get(R"(/patient/intensity/([^/]+)/([^/]+))",
                [this](const httplib::Request& req, httplib::Response& res) {
                  if (patient_calls_++ == 0) {
                    res.status = 429;
                    res.set_header("Retry-After", "3600");  // an hour: not waited for
                    return;
                  }
                  const auto first = *util::parse_utc_time(req.matches[1].str()) / kS;
                  res.set_content(national(first, 1, 1), "application/json");
                });
    server_.Get(R"(/down/.*)", [](const httplib::Request&, httplib::Response& res) {
      res.status = 500;
      res.set_content("upstream exploded", "text/plain");
    });
    server_.Get(R"(/slow/.*)", [](const httplib::Request&, httplib::Response& res) {
      std::this_thread::sleep_for(std::chrono::seconds(3));
      res.set_content("{}", "application/json");
    });
    server_.Get(R"(/garbage/.*)", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("{\"data\": [{\"from\": ", "application/json");
    });
    server_.Get(R"(/odd/.*)", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"data": [{"start": "2026-11-25T13:00Z"}]})", "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~FakeApi() {
    server_.stop();
    thread_.join();
  }
  std::string url(const std::string& prefix = "") const {
    return "http://127.0.0.1:" + std::to_string(port_) + prefix;
  }
  const std::vector<std::string>& paths() const { return paths_; }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::vector<std::string> paths_;
  std::atomic<int> busy_calls_{0};
  std::atomic<int> patient_calls_{0};
};

FetchOptions at(const std::string& url) {
  FetchOptions o;
  o.base_url = url;
  o.timeout = std::chrono::milliseconds(1500);
  return o;
}

// 2026-11-25 23:10:00Z to 2026-11-26 00:50:00Z: across midnight, several half hours.
constexpr std::int64_t kStart = 1'795'648'200LL * kS;
constexpr std::int64_t kEnd = kStart + 6000 * kS;

TEST(UkGrid, AreasByNameIdPostcodeOrNation) {
  EXPECT_FALSE(parse_uk_area("").region_id.has_value());
  EXPECT_EQ(parse_uk_area("GB").name, "Great Britain");
  EXPECT_EQ(parse_uk_area("south england").region_id, 12);
  EXPECT_EQ(parse_uk_area("12").name, "South England");
  EXPECT_EQ(parse_uk_area("North Wales & Merseyside").region_id, 6);
  EXPECT_EQ(parse_uk_area("rg10").postcode, "RG10");
  EXPECT_EQ(uk_regions().size(), 17U);
  try {
    (void)parse_uk_area("Atlantis");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find("12 South England"), std::string::npos);
  }
}

TEST(UkGrid, NationalAcrossMidnightInWholeHalfHours) {
  FakeApi api;
  const IntensitySeries s = fetch_uk(parse_uk_area("GB"), kStart, kEnd, at(api.url()));
  ASSERT_EQ(api.paths().size(), 1U);
  EXPECT_EQ(api.paths()[0], "/intensity/2026-11-25T23:00Z/2026-11-26T01:00Z");
  ASSERT_EQ(s.periods.size(), 4U);
  EXPECT_EQ(s.periods[0].start_wall_ns, kStart - 600 * kS);
  EXPECT_EQ(s.periods[0].kind, IntensityKind::Actual);  // measured where the API has it
  EXPECT_EQ(s.periods[0].g_per_kwh, 100);
  EXPECT_EQ(s.periods[2].kind, IntensityKind::Forecast);  // else its forecast, said so
  EXPECT_EQ(s.periods[2].g_per_kwh, 220);
  EXPECT_EQ(s.source, "UK Carbon Intensity API");
  EXPECT_EQ(s.region, "Great Britain");
}

TEST(UkGrid, ARunShorterThanOneIntervalAsksForOne) {
  FakeApi api;
  const IntensitySeries s =
      fetch_uk(parse_uk_area("GB"), kStart + 60 * kS, kStart + 120 * kS, at(api.url()));
  EXPECT_EQ(api.paths().at(0), "/intensity/2026-11-25T23:00Z/2026-11-25T23:30Z");
  EXPECT_EQ(s.periods.size(), 1U);
}

TEST(UkGrid, RegionalDataIsAnObjectAndForecastOnly) {
  FakeApi api;
  const IntensitySeries s =
      fetch_uk(parse_uk_area("South England"), kStart, kStart + 60 * kS, at(api.url()));
  EXPECT_EQ(api.paths().at(0),
            "/regional/intensity/2026-11-25T23:00Z/2026-11-25T23:30Z/regionid/12");
  EXPECT_EQ(s.region, "South England");
  ASSERT_FALSE(s.periods.empty());
  EXPECT_EQ(s.periods[0].kind, IntensityKind::Forecast);
}

TEST(UkGrid, RateLimitIsRetriedAfterRetryAfter) {
  FakeApi api;
  const IntensitySeries s = fetch_uk(parse_uk_area("GB"), kStart, kEnd, at(api.url("/busy")));
  EXPECT_EQ(s.periods.size(), 1U);
  // A Retry-After of an hour is waited for only up to the limit.
  FetchOptions patient = at(api.url("/patient"));
  patient.max_retry_after_s = 0.2;
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(fetch_uk(parse_uk_area("GB"), kStart, kEnd, patient).periods.size(), 1U);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
}

void expect_failure(const std::string& url, const std::string& words) {
  try {
    (void)fetch_uk(parse_uk_area("GB"), kStart, kEnd, at(url));
    FAIL() << "no error from " << url;
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 1);
    const std::string said = e.summary() + ": " + e.reason();
    EXPECT_NE(said.find(words), std::string::npos) << said;
  }
}

TEST(UkGrid, FailuresSayWhatHappened) {
  FakeApi api;
  expect_failure(api.url("/down"), "HTTP 500");
  expect_failure(api.url("/garbage"), "is not JSON");
  expect_failure(api.url("/odd"), "has no \"from\"");
  expect_failure("http://127.0.0.1:1", "no answer from 127.0.0.1:1");
  expect_failure("http://no-such-host.invalid", "no answer from no-such-host.invalid");
  const auto started = std::chrono::steady_clock::now();
  expect_failure(api.url("/slow"), "after 1500 ms");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(2800));
}

// analyze end to end: a simulated run, the fake API, the run database.
TEST(UkGridCommand, FetchedJoinedStoredAndReusedOffline) {
  TempDir dir;
  const std::string db = dir.file("run.db");
  const std::map<std::string, std::string> env{{"GPUSCOPE_SIM_STATE", dir.file("sim.json")}};
  ASSERT_EQ(run_gpuscope({"profile", "--simulate", "h100", "-q", "-o", db, "--", "sleep", "1"}, env)
                .exit_code,
            0);
  std::string url;
  {
    FakeApi api;
    const auto r = run_gpuscope(
        {"analyze", db, "--json", "--carbon-source", "uk", "--carbon-url", api.url()}, env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto carbon = nlohmann::json::parse(r.out)["carbon"];
    EXPECT_EQ(carbon["source"], "UK Carbon Intensity API");
    EXPECT_EQ(carbon["region"], "Great Britain");
    EXPECT_FALSE(carbon["intervals"].empty());
    EXPECT_GT(carbon["coverage"].get<double>(), 0.99);
    EXPECT_GT(carbon["flat_grams"].get<double>(), 0);
    url = api.url();
  }
  EXPECT_GE(std::stoi(testing::scalar(db, "SELECT count(*) FROM grid_intensity").value_or("0")), 1);
  // --aggregate carbon --csv: the periods with their energy and carbon, from what was stored.
  const auto csv = run_gpuscope({"analyze", db, "--csv", "--aggregate", "carbon", "--carbon-source",
                                 "uk", "--carbon-url", url},
                                env);
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("start,end,kind,g_per_kwh,energy_j,grams\n", 0), 0U) << csv.out;
  EXPECT_NE(csv.out.find(",actual,"), std::string::npos) << csv.out;
  // The server is gone: the stored figures answer, and say so.
  const auto offline =
      run_gpuscope({"analyze", db, "--json", "--carbon-source", "uk", "--carbon-url", url}, env);
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  const auto doc = nlohmann::json::parse(offline.out);
  EXPECT_EQ(doc["carbon"]["source"], "UK Carbon Intensity API");
  EXPECT_NE(doc["notes"].dump().find("as stored in"), std::string::npos);
  // --carbon-refetch with no server: the yearly average, named as such, and a warning.
  const auto refetch = run_gpuscope(
      {"analyze", db, "--json", "--carbon-source", "uk", "--carbon-url", url, "--carbon-refetch"},
      env);
  ASSERT_EQ(refetch.exit_code, 0) << refetch.err;
  EXPECT_NE(refetch.err.find("counted at the yearly average"), std::string::npos);
  const auto fallback = nlohmann::json::parse(refetch.out);
  EXPECT_NE(fallback["carbon"]["source"].get<std::string>().find("yearly average"),
            std::string::npos);
  EXPECT_TRUE(fallback["carbon"]["intervals"].empty());
}

TEST(UkGridCommand, BadRegionAndCombinationsAreUsageErrors) {
  EXPECT_EQ(run_gpuscope({"analyze", "x.db", "--carbon-source", "uk", "--carbon-region", "Mars"})
                .exit_code,
            2);
  EXPECT_EQ(run_gpuscope({"analyze", "x.db", "--carbon-source", "eu"}).exit_code, 2);
  const auto list = run_gpuscope({"analyze", "--carbon-source", "uk", "--carbon-region", "list",
                                  "--carbon-url", "http://127.0.0.1:1"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("12  South England"), std::string::npos) << list.out;
}

}  // namespace
}  // namespace gpuscope::carbon
