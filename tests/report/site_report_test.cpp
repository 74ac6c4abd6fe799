// The site report's document: self-contained, carries its data and heatmap bytes, and no name
// from the site (quotes, markup, non-ASCII) can end a <script> element or inject markup.
#include "report/site_report.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "core/error.hpp"
#include "embedded_data.hpp"
#include "report/site_report_data.hpp"
#include "synthetic_site.hpp"

namespace gpuscope::report {
namespace {

using nlohmann::json;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class SiteReportTest : public ::testing::Test {
 protected:
  SiteReportData data = testing::small_site();
  std::string html = site_report_html(data);
  std::string data_text = testing::embedded_text(html, "site-data");
  json object = json::parse(data_text);
};

TEST_F(SiteReportTest, IsOneSelfContainedDocument) {
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0U);
  EXPECT_NE(html.find("<meta charset=\"utf-8\">"), std::string::npos);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  EXPECT_FALSE(std::regex_search(html, std::regex("<script[^>]*\\ssrc\\s*=", std::regex::icase)));
  EXPECT_FALSE(std::regex_search(html, std::regex("<link[\\s>]", std::regex::icase)));
  EXPECT_FALSE(std::regex_search(
      html, std::regex("(src|href)\\s*=\\s*['\"]?(https?:)?//", std::regex::icase)));
  EXPECT_NE(html.find("uPlot"), std::string::npos);
  EXPECT_NE(html.find("gsSite.drawHeatmap"), std::string::npos);
  EXPECT_NE(html.find("gpuscopeReady"), std::string::npos);
}

TEST_F(SiteReportTest, NoNameCanCloseAScriptElementOrAddMarkup) {
  // The hostile job name holds "</script><b>x</b>": only the five real elements end.
  EXPECT_EQ(count(html, "<script"), 5U);  // data, heatmap, uPlot, site_heatmap.js, site.js
  EXPECT_EQ(count(html, "</script>"), 5U);
  EXPECT_EQ(html.find("<b>x</b>"), std::string::npos);
  EXPECT_EQ(data_text.find('<'), std::string::npos);
  EXPECT_NE(html.find("<title>GPU jobs of &quot;test&quot; &lt;cluster&gt;</title>"),
            std::string::npos);
}

TEST_F(SiteReportTest, CarriesTheNamesExactly) {
  EXPECT_EQ(object["title"], data.title);
  EXPECT_EQ(object["top_idle"][0]["name"], testing::kHostileName);
  EXPECT_EQ(object["top_idle"][0]["user"], testing::kHostileUser);
  EXPECT_EQ(object["users"][1]["group"], testing::kHostileUser);
  EXPECT_EQ(object["by_user"][1]["group"], testing::kHostileUser);
  EXPECT_EQ(object["by_account"][1]["group"], "chem & bio");
  EXPECT_EQ(object["source"], data.source);
}

TEST_F(SiteReportTest, CarriesTheFigures) {
  const json& t = object["totals"];
  EXPECT_EQ(t["jobs"], 42);
  EXPECT_DOUBLE_EQ(t["gpu_hours"].get<double>(), 1234.5);
  EXPECT_DOUBLE_EQ(t["idle_gpu_hours"].get<double>(), 234.56);
  EXPECT_DOUBLE_EQ(t["energy_j"].get<double>(), 567.8 * 3.6e6);
  EXPECT_DOUBLE_EQ(t["util_pct"].get<double>(), 43.21);
  EXPECT_EQ(t["flagged_jobs"], 5);
  EXPECT_TRUE(object["users"][1]["sm_active_pct"].is_null());
  EXPECT_EQ(object["periods"].size(), 7U);
  EXPECT_EQ(object["by_user"][0]["gpu_hours"].size(), 7U);
  EXPECT_EQ(object["efficiency"]["jobs"][7], 8);
  EXPECT_EQ(object["efficiency"]["jobs_unknown"], 2);
  EXPECT_EQ(object["heatmap"]["nodes"].size(), 6U);
  EXPECT_EQ(object["heatmap"]["bins"], 7);
  EXPECT_EQ(object["heatmap"]["bin_ms"], testing::kDayMs);
}

TEST_F(SiteReportTest, EachTopJobHasItsFlagsAndCommand) {
  const json& jobs = object["top_idle"];
  ASSERT_EQ(jobs.size(), 3U);
  EXPECT_EQ(jobs[0]["id"], "1001");
  EXPECT_EQ(jobs[2]["id"], "1003");
  EXPECT_EQ(jobs[0]["command"], "gpuscope job 1001 -o 1001.html");
  EXPECT_EQ(jobs[0]["flags"], json::array({"idle", "too-large"}));
  EXPECT_EQ(jobs[2]["flags"], json::array({"straggler"}));
  EXPECT_TRUE(jobs[2]["util_pct"].is_null());
  data.job_command = "ssh login gpuscope job {id}";
  EXPECT_EQ(site_report_json(data)["top_idle"][1]["command"], "ssh login gpuscope job 1002");
}

TEST_F(SiteReportTest, EmbedsTheHeatmapAsBytes) {
  const std::string bytes = testing::embedded_text(html, "site-heatmap");
  const std::size_t cells = 6 * 7;
  ASSERT_EQ(bytes.size(), 2 * cells);
  const auto at = [&bytes](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
  EXPECT_EQ(at(0), 188);      // 75 % of 250 steps
  EXPECT_EQ(at(cells), 250);  // busy the whole day
  EXPECT_EQ(at(7), 255);      // node 1, day 0: blank
  EXPECT_EQ(at(cells + 7), 0);
  EXPECT_EQ(at(10), 0);  // node 1, day 3: busy at 0 % (not blank)
  EXPECT_EQ(at(cells + 10), 250);
}

TEST(SiteHeatmapBytes, QuantisesClampsAndBlanks) {
  NodeHeatmap h;
  h.nodes = {"a"};
  h.bin_ms = 1000;
  h.bins = 5;
  h.util_pct = {100, 150, NAN, 40, 0.2F};
  h.busy = {0.001F, 1, 1, 0, 2};
  const std::vector<std::uint8_t> b = site_heatmap_bytes(h);
  ASSERT_EQ(b.size(), 10U);
  EXPECT_EQ(b[0], 250);
  EXPECT_EQ(b[5], 1);    // a sliver of busy time is still busy
  EXPECT_EQ(b[1], 250);  // clamped to 100 %
  EXPECT_EQ(b[2], 255);  // unknown utilization: blank
  EXPECT_EQ(b[3], 255);  // nobody there: blank, whatever the utilization says
  EXPECT_EQ(b[4], 1);    // 0.2 % is 0.5 steps, rounded up
  EXPECT_EQ(b[9], 250);  // a share over 1 is 1
}

TEST(SiteHeatmapBytes, RefusesAMisshapedHeatmap) {
  NodeHeatmap h;
  h.nodes = {"a", "b"};
  h.bin_ms = 1000;
  h.bins = 3;
  h.util_pct.assign(5, 1);
  h.busy.assign(6, 1);
  EXPECT_THROW(site_heatmap_bytes(h), Error);
}

TEST(SiteReportJson, RefusesASeriesOfTheWrongLength) {
  SiteReportData d = testing::small_site();
  d.by_account[0].gpu_hours.pop_back();
  EXPECT_THROW(site_report_json(d), Error);
}

TEST(SiteReportJson, AnEmptySiteStillMakesAPage) {
  const SiteReportData d;
  const json j = site_report_json(d);
  EXPECT_EQ(j["title"], "GPU jobs of the site");
  EXPECT_TRUE(j["top_idle"].empty());
  EXPECT_NE(site_report_html(d).find("site-heatmap"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::report
