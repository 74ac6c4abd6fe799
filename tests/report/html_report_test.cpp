// The HTML document: self-contained (nothing fetched), carries its data and scripts, and no
// text from the run can end a <script> element or inject markup.
#include "report/html_report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "embedded_data.hpp"
#include "synthetic_analysis.hpp"

namespace gpuscope::report {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The JSON text of the embedded data.
std::string data_text(const std::string& html) {
  return testing::gunzip(testing::from_base64(testing::embedded_element(html, "gpuscope-data")));
}

class HtmlReportTest : public ::testing::Test {
 protected:
  analyze::Analysis analysis = testing::synthetic_analysis();
  HtmlReportOptions options{"Run </script><b>x</b> & \"y\"", "gpuscope test"};
  std::string html = html_report(analysis, options);
};

TEST_F(HtmlReportTest, IsOneCompleteDocument) {
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0U);
  EXPECT_NE(html.find("<meta charset=\"utf-8\">"), std::string::npos);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  EXPECT_NE(html.find("id=\"report\""), std::string::npos);
}

TEST_F(HtmlReportTest, FetchesNothing) {
  // Every script and style is inline: no src=, no <link>, no CSS import or remote url().
  EXPECT_FALSE(std::regex_search(html, std::regex("<script[^>]*\\ssrc\\s*=", std::regex::icase)));
  EXPECT_FALSE(std::regex_search(html, std::regex("<link[\\s>]", std::regex::icase)));
  EXPECT_FALSE(std::regex_search(html, std::regex("@import", std::regex::icase)));
  EXPECT_FALSE(std::regex_search(html, std::regex("url\\(\\s*['\"]?https?:", std::regex::icase)));
  EXPECT_FALSE(std::regex_search(
      html, std::regex("(src|href)\\s*=\\s*['\"]?(https?:)?//", std::regex::icase)));
}

TEST_F(HtmlReportTest, EmbedsUplotAndItsOwnScripts) {
  EXPECT_NE(html.find("uPlot"), std::string::npos);
  EXPECT_NE(html.find(".uplot"), std::string::npos);  // uPlot's stylesheet
  EXPECT_NE(html.find("gpuscopeReady"), std::string::npos);
  EXPECT_NE(html.find("gs.heatmap"), std::string::npos);
  EXPECT_EQ(count(html, "<script"), 4U);  // data, uPlot, charts, report
}

TEST_F(HtmlReportTest, NoDataCanCloseAScriptElement) {
  // The title and an output line both hold "</script>": only the four real elements end.
  EXPECT_EQ(count(html, "</script>"), 4U);
  EXPECT_EQ(html.find("<b>x</b>"), std::string::npos);
  EXPECT_NE(html.find("<title>Run &lt;/script&gt;&lt;b&gt;x&lt;/b&gt; &amp; &quot;y&quot;</title>"),
            std::string::npos);
  EXPECT_EQ(data_text(html).find('<'), std::string::npos);
}

TEST_F(HtmlReportTest, EmbedsTheAnalysisAsJson) {
  const auto data = nlohmann::json::parse(data_text(html));
  EXPECT_EQ(data["schema"], "gpuscope-analysis/1");
  EXPECT_EQ(data["title"], options.title);
  ASSERT_EQ(data["gpus"].size(), 3U);
  EXPECT_EQ(data["balance"]["stragglers"].size(), 1U);
  EXPECT_EQ(data["balance"]["stragglers"][0]["gpu"], 2);
  EXPECT_TRUE(data["over_space"].contains("power_w"));
  EXPECT_EQ(data["marks"].size(), 2U);
  EXPECT_EQ(data["marks"][1]["text"], "epoch 1 </script><script>alert(1)</script>");
  EXPECT_EQ(data["metrics"]["power_w"]["unit"], "W");
  // Compressed: the element (base64 of gzip) is smaller than the JSON it carries.
  EXPECT_LT(testing::embedded_element(html, "gpuscope-data").size(), data_text(html).size());
}

TEST_F(HtmlReportTest, EmbedsPerGpuGridsWithUnsupportedMetricsMarked) {
  const auto data = nlohmann::json::parse(data_text(html));
  const auto& grid = data["gpu_grid"];
  const std::size_t bins = grid["bins"];
  EXPECT_GT(bins, 0U);
  EXPECT_LE(bins, 300U);
  const auto& sm = grid["metrics"]["sm_active_pct"];
  EXPECT_EQ(sm["bytes"].get<std::string>().size(), (3 * bins + 2) / 3 * 4);
  EXPECT_EQ(sm["gpus_with_data"], nlohmann::json::array({true, false, true}));
  // Summaries as arrays in the order of over_time_metrics: GPU 1 has no SM activity.
  const auto& names = data["over_time_metrics"];
  const auto sm_at = std::find(names.begin(), names.end(), "sm_active_pct") - names.begin();
  ASSERT_LT(sm_at, static_cast<std::ptrdiff_t>(names.size()));
  EXPECT_TRUE(data["gpus"][1]["over_time"][static_cast<std::size_t>(sm_at)].is_null());
  // A metric no GPU has: kept with no range, every GPU without data.
  const auto& tensor = grid["metrics"]["tensor_active_pct"];
  EXPECT_TRUE(tensor["lo"].is_null());
  EXPECT_EQ(tensor["gpus_with_data"], nlohmann::json::array({false, false, false}));
}

TEST_F(HtmlReportTest, DefaultTitleNamesTheGpuCount) {
  const std::string plain = html_report(analysis, {});
  EXPECT_NE(plain.find("<title>gpuscope report · 3 GPUs</title>"), std::string::npos);
}

TEST(HtmlEscapeTest, EscapesMarkupCharacters) {
  EXPECT_EQ(html_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(html_escape("plain · text"), "plain · text");
}

}  // namespace
}  // namespace gpuscope::report
