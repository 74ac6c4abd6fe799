// carbon/grid_source against a local stand-in for Electricity Maps (loopback only): the options
// checked before anything is read, a series kept in the cache reused, and the notes naming the
// source that was asked (an empty answer from Electricity Maps once named the UK API).
#include "carbon/grid_source.hpp"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>

#include "core/error.hpp"

namespace gpuscope::carbon {
namespace {

constexpr std::int64_t kS = 1'000'000'000;
constexpr std::int64_t kStart = 1'795'648'200LL * kS;  // 2026-11-25 23:10Z
constexpr std::int64_t kEnd = kStart + 6000 * kS;

// Answers every zone with no figures at all.
class EmptyElectricityMaps {
 public:
  EmptyElectricityMaps() {
    server_.Get("/v3/carbon-intensity/past-range",
                [this](const httplib::Request&, httplib::Response& res) {
                  ++asked_;
                  res.set_content(R"({"zone": "DE", "data": []})", "application/json");
                });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~EmptyElectricityMaps() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int asked() const { return asked_; }

 private:
  httplib::Server server_;
  int port_ = 0;
  int asked_ = 0;
  std::thread thread_;
};

class MemoryCache final : public GridCache {
 public:
  std::optional<IntensitySeries> load(const std::string& key) override {
    auto it = kept.find(key);
    return it == kept.end() ? std::nullopt : std::optional(it->second);
  }
  void save(const std::string& key, const IntensitySeries& series, std::int64_t) override {
    kept[key] = series;
  }
  std::string where() const override { return "memory"; }
  std::map<std::string, IntensitySeries> kept;
};

GridOptions electricity_maps(const std::string& url) {
  GridOptions o;
  o.source = "electricitymaps";
  o.region = "DE";
  o.base_url = url;
  return o;
}

TEST(GridSource, NoFiguresNamesTheSourceAsked) {
  EmptyElectricityMaps api;
  const GridRequest request = grid_request(electricity_maps(api.url()), "token");
  EXPECT_EQ(request.key(), "electricitymaps:DE");
  MemoryCache cache;
  std::vector<std::string> notes;
  EXPECT_FALSE(grid_series(request, kStart, kEnd, cache, notes));
  EXPECT_EQ(api.asked(), 1);
  ASSERT_EQ(notes.size(), 1U);
  EXPECT_NE(notes[0].find("Electricity Maps had no figures for DE"), std::string::npos) << notes[0];
  EXPECT_EQ(notes[0].find("UK"), std::string::npos) << notes[0];
  EXPECT_TRUE(cache.kept.empty()) << "nothing to keep";
}

TEST(GridSource, AKeptSeriesCoveringTheRunIsUsedWithoutAsking) {
  EmptyElectricityMaps api;
  const GridRequest request = grid_request(electricity_maps(api.url()), "token");
  MemoryCache cache;
  IntensitySeries kept;
  kept.region = "DE";
  kept.periods.push_back({kStart - 3600 * kS, kEnd + 3600 * kS, 321.0, IntensityKind::Actual});
  cache.kept["electricitymaps:DE"] = kept;
  std::vector<std::string> notes;
  const auto series = grid_series(request, kStart, kEnd, cache, notes);
  ASSERT_TRUE(series);
  EXPECT_EQ(series->periods.front().g_per_kwh, 321.0);
  EXPECT_EQ(api.asked(), 0);
  ASSERT_EQ(notes.size(), 1U);
  EXPECT_NE(notes[0].find("as stored in memory"), std::string::npos) << notes[0];
}

TEST(GridSource, OptionsAreCheckedBeforeAnythingIsAsked) {
  GridOptions o = electricity_maps("http://127.0.0.1:9");
  o.region.clear();
  EXPECT_THROW(grid_request(o, "token"), Error);
  o = electricity_maps("http://127.0.0.1:9");
  EXPECT_THROW(grid_request(o, ""), Error) << "no token";
  o.source = "nowhere";
  EXPECT_THROW(grid_request(o, "token"), Error);
  o = electricity_maps("http://127.0.0.1:9");
  o.with_series_file = true;
  EXPECT_THROW(grid_request(o, "token"), Error);
}

}  // namespace
}  // namespace gpuscope::carbon
