// The report's data helpers: base64, rounding, JSON safe inside <script>, quantised grids, and
// what bounds a big run's data (time-binned per-GPU series, grouped heatmap rows, means only).
#include "report/html_data.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
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
// (a label) become U+FFFD, infinities and NaN become null.
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

// Standard base64 back to bytes (what report.js's atob does).
std::vector<std::uint8_t> unbase64(const std::string& text) {
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::vector<std::uint8_t> out;
  std::uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    if (c == '=') break;
    bits = (bits << 6U) | static_cast<std::uint32_t>(alphabet.find(c));
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<std::uint8_t>((bits >> static_cast<unsigned>(count)) & 0xFFU));
    }
  }
  return out;
}

// One metric's grid decoded: row-major values, NaN where the byte says "no sample".
std::vector<double> decoded(const nlohmann::json& grid) {
  std::vector<double> out;
  const double lo = grid["lo"], hi = grid["hi"];
  for (std::uint8_t q : unbase64(grid["bytes"])) {
    out.push_back(q == 255 ? std::nan("") : lo + q / 254.0 * (hi - lo));
  }
  return out;
}

// The mean of the values that are not NaN.
double mean_of(const std::vector<double>& values) {
  double sum = 0;
  int n = 0;
  for (double v : values) {
    if (std::isnan(v)) continue;
    sum += v;
    ++n;
  }
  return n ? sum / n : std::nan("");
}

std::size_t metric_slot(const nlohmann::json& data, const std::string& name) {
  const auto& names = data["over_time_metrics"];
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (names[k] == name) return k;
  }
  ADD_FAILURE() << name << " is not in over_time_metrics";
  return 0;
}

TEST(HtmlReportDataTest, SmallRunKeepsEveryGpuAtFullResolutionAndEverySummaryField) {
  const auto a = testing::synthetic_analysis(3, 60);
  const auto data = html_report_data(a);
  EXPECT_FALSE(data["gpu_grid"].contains("rows"));
  EXPECT_DOUBLE_EQ(data["gpu_grid"]["bin_s"].get<double>(), a.gpu_grid_bin_s);
  EXPECT_EQ(data["over_time_fields"].size(), 7U);
  const std::size_t k = metric_slot(data, "power_w");
  const auto& power = data["gpus"][2]["over_time"][k];
  ASSERT_EQ(power.size(), 7U);
  EXPECT_NEAR(power[1].get<double>(),
              a.gpus[2].over_time[static_cast<std::size_t>(Metric::PowerW)]->mean,
              0.1);  // [1] is the mean
  EXPECT_EQ(power[0], a.gpus[2].over_time[static_cast<std::size_t>(Metric::PowerW)]->count);
  EXPECT_TRUE(data["gpus"][1]["over_time"][metric_slot(data, "sm_active_pct")].is_null());
}

// Past the limits: each GPU's series on bins a whole number of times wider, so GPUs × bins stays
// within the cell budget; the heatmap's rows the means of groups of consecutive GPUs at full
// resolution; summaries with their means only.
TEST(HtmlReportDataTest, BigRunBinsGpuSeriesAndGroupsHeatmapRows) {
  const auto a = testing::synthetic_analysis(5, 120, 2);
  const std::size_t bins = a.gpu_grid_bins;
  ASSERT_GE(bins, 8U);
  HtmlDataLimits limits;
  limits.grid = {2, 5 * bins / 4};
  limits.full_summary_gpus = 4;
  const auto data = html_report_data(a, limits);
  const auto& grid = data["gpu_grid"];
  const std::size_t coarse = grid["bins"];
  EXPECT_LE(5 * coarse, limits.grid.max_cells);
  const auto factor =
      static_cast<std::size_t>(std::lround(grid["bin_s"].get<double>() / a.gpu_grid_bin_s));
  EXPECT_GE(factor, 4U);
  EXPECT_EQ(coarse, (bins + factor - 1) / factor);
  const auto power = decoded(grid["metrics"]["power_w"]);
  ASSERT_EQ(power.size(), 5 * coarse);
  const double step = grid["metrics"]["power_w"]["hi"].get<double>() / 254;
  for (std::size_t g = 0; g < 5; ++g) {
    const auto& fine = a.gpus[g].grid[0].mean;  // power_w is the first grid metric
    for (std::size_t b = 0; b < coarse; ++b) {
      std::vector<double> cover(fine.begin() + static_cast<long>(b * factor),
                                fine.begin() + static_cast<long>(std::min(bins, (b + 1) * factor)));
      EXPECT_NEAR(power[g * coarse + b], mean_of(cover), step) << "GPU " << g << " bin " << b;
    }
  }
  EXPECT_LT(power[4 * coarse + coarse / 2], power[coarse / 2]);  // the straggler draws less
  EXPECT_EQ(grid["metrics"]["sm_active_pct"]["gpus_with_data"],
            nlohmann::json::array({true, false, true, true, true}));

  const auto& rows = grid["rows"];
  EXPECT_EQ(rows["gpus_per_row"], 3);
  EXPECT_EQ(rows["count"], 2);
  EXPECT_EQ(rows["bins"], bins);
  const auto grouped = decoded(rows["metrics"]["power_w"]);
  ASSERT_EQ(grouped.size(), 2 * bins);
  for (std::size_t b = 0; b < bins; ++b) {
    const double last_two = mean_of({a.gpus[3].grid[0].mean[b], a.gpus[4].grid[0].mean[b]});
    EXPECT_NEAR(grouped[bins + b], last_two, step) << "bin " << b;
  }

  EXPECT_EQ(data["over_time_fields"], nlohmann::json::array({"mean"}));
  const auto& summary = data["gpus"][4]["over_time"][metric_slot(data, "power_w")];
  ASSERT_EQ(summary.size(), 1U);
  EXPECT_NEAR(summary[0].get<double>(),
              a.gpus[4].over_time[static_cast<std::size_t>(Metric::PowerW)]->mean, 0.1);
}

}  // namespace
}  // namespace gpuscope::report
