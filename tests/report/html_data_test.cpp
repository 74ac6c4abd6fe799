// The report's data helpers: base64, rounding, JSON safe inside <script>, quantised grids.
#include "report/html_data.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "synthetic_analysis.hpp"

namespace gpuscope::report {
namespace {

std::string b64(const std::string& text) {
  std::vector<std::uint8_t> bytes(text.begin(), text.end());
  return base64(bytes);
}

TEST(Base64Test, MatchesRfc4648Vectors) {
  EXPECT_EQ(b64(""), "");
  EXPECT_EQ(b64("f"), "Zg==");
  EXPECT_EQ(b64("fo"), "Zm8=");
  EXPECT_EQ(b64("foo"), "Zm9v");
  EXPECT_EQ(b64("foob"), "Zm9vYg==");
  EXPECT_EQ(b64("fooba"), "Zm9vYmE=");
  EXPECT_EQ(b64("foobar"), "Zm9vYmFy");
  const std::vector<std::uint8_t> high = {0xFF, 0xFE, 0x00};
  EXPECT_EQ(base64(high), "//4A");
}

TEST(RoundNumbersTest, KeepsSignificantDigitsAndIntegers) {
  nlohmann::json j = {{"a", 123.456789}, {"b", {0.000123456, 7}}, {"c", 1e300 * 10}};
  j["c"] = std::numeric_limits<double>::infinity();
  round_numbers(j, 4);
  EXPECT_DOUBLE_EQ(j["a"].get<double>(), 123.5);
  EXPECT_DOUBLE_EQ(j["b"][0].get<double>(), 0.0001235);
  EXPECT_EQ(j["b"][1], 7);
  EXPECT_TRUE(j["c"].is_null());  // not JSON-representable
}

TEST(JsonForScriptTest, HasNoAngleBracketAndParsesBack) {
  const nlohmann::json j = {{"text", "</script><!-- x"}};
  const std::string text = json_for_script(j);
  EXPECT_EQ(text.find('<'), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(text), j);
}

// What the report embeds must parse strictly whatever the run held: bytes that are not UTF-8
// (a label) become U+FFFD, infinities and NaN become null (issue 12).
TEST(JsonForScriptTest, ReplacesInvalidUtf8AndNonFiniteNumbers) {
  const nlohmann::json j = {{"label", "lab\xff"},
                            {"w", std::numeric_limits<double>::infinity()},
                            {"x", -std::numeric_limits<double>::infinity()},
                            {"n", std::numeric_limits<double>::quiet_NaN()}};
  const nlohmann::json back = nlohmann::json::parse(json_for_script(j));
  EXPECT_EQ(back["label"], "lab\xef\xbf\xbd");
  EXPECT_TRUE(back["w"].is_null());
  EXPECT_TRUE(back["x"].is_null());
  EXPECT_TRUE(back["n"].is_null());
}

TEST(HtmlReportDataTest, QuantisesGridsToTheRangeOfAllGpus) {
  const auto a = testing::synthetic_analysis(3, 60);
  const auto data = html_report_data(a);
  const auto& power = data["gpu_grid"]["metrics"]["power_w"];
  // Power is 300 + 2·busy ± 5: the straggler (busy 40) is lowest, the others (80) highest.
  EXPECT_NEAR(power["lo"].get<double>(), 375, 1);
  EXPECT_NEAR(power["hi"].get<double>(), 465, 1);
  EXPECT_EQ(data["gpu_grid"]["bins"], a.gpu_grid_bins);
  EXPECT_EQ(a.gpus[0].grid.size(), html_report_grid_metrics().size());
}

}  // namespace
}  // namespace gpuscope::report
