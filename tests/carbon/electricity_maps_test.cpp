// Electricity Maps against a local stand-in (loopback only): the answer's shape, the token in
// its header (and nowhere else: not in messages, output or the run database), refused tokens,
// unknown zones; then `gpuscope analyze --carbon-source electricitymaps` end to end.
#include "carbon/electricity_maps.hpp"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <fstream>
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
constexpr const char* kToken = "s3cret-token-42";

class FakeElectricityMaps {
 public:
  FakeElectricityMaps() {
    server_.Get("/v3/carbon-intensity/past-range", [this](const httplib::Request& req,
                                                          httplib::Response& res) {
      queries_.push_back(req.get_param_value("zone") + " " + req.get_param_value("start") + " " +
                         req.get_param_value("end"));
      if (req.get_header_value("auth-token") != kToken) {
        res.status = 401;
        res.set_content(R"({"error": "Invalid token"})", "application/json");
        return;
      }
      if (req.get_param_value("zone") != "DE") {
        res.status = 404;
        res.set_content(R"({"error": "Zone 'XX' does not exist"})", "application/json");
        return;
      }
      const auto start = *util::parse_utc_time(req.get_param_value("start"));
      const auto end = *util::parse_utc_time(req.get_param_value("end"));
      nlohmann::json data = nlohmann::json::array();
      int i = 0;
      for (auto t = start; t < end; t += 3600 * kS, ++i) {
        data.push_back({{"zone", "DE"},
                        {"carbonIntensity", 300 + 20 * i},
                        {"datetime", util::utc_text(t, "%Y-%m-%dT%H:%M:%S.000Z")},
                        {"emissionFactorType", "lifecycle"},
                        {"isEstimated", i > 0}});
      }
      res.set_content(nlohmann::json{{"zone", "DE"}, {"data", data}}.dump(), "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~FakeElectricityMaps() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  const std::vector<std::string>& queries() const { return queries_; }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::vector<std::string> queries_;
};

FetchOptions at(const std::string& url) {
  FetchOptions o;
  o.base_url = url;
  o.timeout = std::chrono::milliseconds(1500);
  o.max_attempts = 1;
  return o;
}

// 2026-11-25 23:10Z for 100 minutes: three hours asked for, across midnight.
constexpr std::int64_t kStart = 1'795'648'200LL * kS;

TEST(ElectricityMaps, HoursOfTheZoneWithTheTokenInItsHeader) {
  FakeElectricityMaps api;
  const auto s = fetch_electricity_maps("DE", kToken, kStart, kStart + 6000 * kS, at(api.url()));
  ASSERT_EQ(api.queries().size(), 1U);
  EXPECT_EQ(api.queries()[0], "DE 2026-11-25T23:00:00Z 2026-11-26T01:00:00Z");
  ASSERT_EQ(s.periods.size(), 2U);
  EXPECT_EQ(s.source, "Electricity Maps");
  EXPECT_EQ(s.region, "DE");
  EXPECT_EQ(s.periods[0].kind, IntensityKind::Actual);
  EXPECT_EQ(s.periods[1].kind, IntensityKind::Estimated);
  EXPECT_EQ(s.periods[1].g_per_kwh, 320);
  EXPECT_EQ(s.periods[0].end_wall_ns - s.periods[0].start_wall_ns, 3600 * kS);
}

void expect_failure(const std::string& zone, const std::string& token, const std::string& url,
                    const std::string& words) {
  try {
    (void)fetch_electricity_maps(zone, token, kStart, kStart + 60 * kS, at(url));
    FAIL();
  } catch (const Error& e) {
    const std::string said = e.summary() + " " + e.reason() + " " + e.hint();
    EXPECT_NE(said.find(words), std::string::npos) << said;
    EXPECT_EQ(said.find(token), std::string::npos) << "the token leaked: " << said;
  }
}

TEST(ElectricityMaps, RefusedTokensAndUnknownZonesSaySo) {
  FakeElectricityMaps api;
  expect_failure("DE", "wrong-token", api.url(), "the token was refused");
  expect_failure("XX", kToken, api.url(), "check the zone");
}

TEST(ElectricityMaps, AnswersOfAnotherShape) {
  EXPECT_THROW((void)parse_electricity_maps_answer("{\"zone\": \"DE\"}", "DE"), Error);
  EXPECT_THROW((void)parse_electricity_maps_answer("[1, 2", "DE"), Error);
  // An hour without a figure is a gap, not an error.
  const auto s = parse_electricity_maps_answer(
      R"({"history": [{"datetime": "2026-11-25T13:00:00.000Z", "carbonIntensity": null},
                       {"datetime": "2026-11-25T14:00:00.000Z", "carbonIntensity": 250}]})",
      "DE");
  ASSERT_EQ(s.periods.size(), 1U);
  EXPECT_EQ(s.periods[0].g_per_kwh, 250);
}

TEST(ElectricityMaps, TheTokenComesFromAFileOrTheEnvironmentOnly) {
  TempDir dir;
  std::ofstream(dir.file("token")) << "  from-file  \nsecond line\n";
  EXPECT_EQ(electricity_maps_token(std::filesystem::path(dir.file("token")), "from-env"),
            "from-file");
  EXPECT_EQ(electricity_maps_token(std::nullopt, "from-env\n"), "from-env");
  EXPECT_THROW((void)electricity_maps_token(std::nullopt, ""), Error);
  EXPECT_THROW((void)electricity_maps_token(std::filesystem::path(dir.file("missing")), "x"),
               Error);
}

TEST(ElectricityMapsCommand, FetchedStoredAndTheTokenNowhere) {
  TempDir dir;
  const std::string db = dir.file("run.db");
  std::map<std::string, std::string> env{{"GPUSCOPE_SIM_STATE", dir.file("sim.json")}};
  ASSERT_EQ(run_gpuscope({"profile", "--simulate", "h100", "-q", "-o", db, "--", "sleep", "1"}, env)
                .exit_code,
            0);
  FakeElectricityMaps api;
  // No token: a usage error before anything is asked.
  env["ELECTRICITYMAPS_TOKEN"] = "\x01";
  const auto none = run_gpuscope({"analyze", db, "--carbon-source", "electricitymaps",
                                  "--carbon-region", "DE", "--carbon-url", api.url()},
                                 env);
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("ELECTRICITYMAPS_TOKEN"), std::string::npos) << none.err;
  EXPECT_TRUE(api.queries().empty());
  env["ELECTRICITYMAPS_TOKEN"] = kToken;
  const auto r = run_gpuscope({"analyze", db, "--json", "--carbon-source", "electricitymaps",
                               "--carbon-region", "DE", "--carbon-url", api.url()},
                              env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto carbon = nlohmann::json::parse(r.out)["carbon"];
  EXPECT_EQ(carbon["source"], "Electricity Maps");
  EXPECT_EQ(carbon["region"], "DE");
  EXPECT_FALSE(carbon["intervals"].empty());
  EXPECT_EQ(r.out.find(kToken), std::string::npos);
  EXPECT_EQ(r.err.find(kToken), std::string::npos);
  EXPECT_EQ(testing::scalar(db,
                            "SELECT count(*) FROM grid_intensity WHERE request = "
                            "'electricitymaps:DE'")
                    .value_or("0") == "0",
            false);
  // The token is in no row of the database.
  EXPECT_EQ(testing::scalar(db, std::string("SELECT count(*) FROM grid_intensity WHERE request || "
                                            "source || region || kind LIKE '%") +
                                    kToken + "%'"),
            "0");
  // A refused token: the yearly average, named as such, and a warning without the token.
  env["ELECTRICITYMAPS_TOKEN"] = "wrong-token";
  const auto refused =
      run_gpuscope({"analyze", db, "--json", "--carbon-source", "electricitymaps",
                    "--carbon-region", "DE", "--carbon-url", api.url(), "--carbon-refetch"},
                   env);
  ASSERT_EQ(refused.exit_code, 0) << refused.err;
  EXPECT_NE(refused.err.find("HTTP 401"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.err.find("wrong-token"), std::string::npos);
  EXPECT_NE(nlohmann::json::parse(refused.out)["carbon"]["source"].get<std::string>().find(
                "yearly average"),
            std::string::npos);
}

}  // namespace
}  // namespace gpuscope::carbon
