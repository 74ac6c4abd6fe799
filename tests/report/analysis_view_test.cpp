// The analysis as text and JSON: which over-both medians are exact and which are estimated.
#include "report/analysis_view.hpp"

#include <gtest/gtest.h>

#include <string>

#include "synthetic_analysis.hpp"

namespace gpuscope::report {
namespace {

std::size_t index_of(Metric m) {
  return static_cast<std::size_t>(m);
}

TEST(AnalysisViewTest, ExactMediansAreShownAsTheyAre) {
  const auto analysis = testing::synthetic_analysis();
  const auto& util = analysis.over_both[index_of(Metric::GpuUtilPct)];
  ASSERT_TRUE(util);
  ASSERT_TRUE(util->median_exact);
  const std::string text = analysis_text(analysis, View::Summary, {}, false);
  EXPECT_EQ(text.find("≈"), std::string::npos) << text;
  EXPECT_EQ(analysis_json(analysis)["over_both"]["gpu_util_pct"]["median_exact"], true);
}

TEST(AnalysisViewTest, EstimatedMediansAreMarkedAndExplained) {
  auto analysis = testing::synthetic_analysis();
  auto& power = analysis.over_both[index_of(Metric::PowerW)];
  ASSERT_TRUE(power);
  power->median_exact = false;  // as when power took more than 16,384 distinct values
  const std::string text = analysis_text(analysis, View::Summary, {}, false);
  const auto row = text.find("\npower_w ");
  ASSERT_NE(row, std::string::npos) << text;
  const std::string line = text.substr(row + 1, text.find('\n', row + 1) - row - 1);
  EXPECT_NE(line.find("≈"), std::string::npos) << line;
  EXPECT_NE(text.find("≈ median estimated within 0.1 %"), std::string::npos) << text;
  EXPECT_EQ(analysis_json(analysis)["over_both"]["power_w"]["median_exact"], false);
}

}  // namespace
}  // namespace gpuscope::report
