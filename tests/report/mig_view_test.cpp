// MIG instances in analyze's text, JSON and the HTML report's data: listed under their parent,
// their energy and power an estimate kept apart from the measured fields, totals measured only.
#include <gtest/gtest.h>

#include <string>

#include "report/analysis_view.hpp"
#include "report/html_data.hpp"
#include "synthetic_analysis.hpp"

namespace gpuscope::report {
namespace {

using nlohmann::json;

// The line of `text` that starts (after spaces) with `start`.
std::string line_of(const std::string& text, const std::string& start) {
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end == std::string::npos ? end : end - at);
    const auto first = line.find_first_not_of(' ');
    if (first != std::string::npos && line.compare(first, start.size(), start) == 0) return line;
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return {};
}

TEST(MigViewTest, PerGpuTableListsInstancesUnderTheirParentWithEstimates) {
  const auto a = testing::synthetic_mig_analysis();
  const std::string text = analysis_text(a, View::Summary, {}, false);
  const auto parent = text.find("\nGPU 0 ");
  const auto first = text.find("└ GPU 0 GI 1 (3g.40gb)");
  const auto last = text.find("└ GPU 0 GI 9 (1g.10gb)");
  const auto whole = text.find("\nGPU 1 ");
  ASSERT_NE(parent, std::string::npos) << text;
  ASSERT_NE(first, std::string::npos) << text;
  EXPECT_LT(parent, first);
  EXPECT_LT(first, last);
  EXPECT_LT(last, whole);
  const std::string row = line_of(text, "└ GPU 0 GI 1 (3g.40gb)");
  EXPECT_NE(row.find("est. "), std::string::npos) << row;
  // Its peak memory, 3 slices × 4e9 B.
  EXPECT_NE(row.find(format_value(Metric::MemoryUsedBytes, 12e9) + " GiB"), std::string::npos)
      << row;
  EXPECT_EQ(line_of(text, "GPU 1").find("est."), std::string::npos);
  EXPECT_NE(text.find("est.: an ESTIMATED share of the parent GPU's measured energy"),
            std::string::npos);
  EXPECT_NE(text.find("unattributed"), std::string::npos);
  EXPECT_NE(text.find("MIG instances' balance"), std::string::npos);
}

TEST(MigViewTest, JsonKeepsEstimatesApartAndTotalsMeasured) {
  const auto a = testing::synthetic_mig_analysis();
  const json j = analysis_json(a);
  ASSERT_EQ(j["gpus"].size(), 5U);
  const json& parent = j["gpus"][0];
  EXPECT_EQ(parent["mig_enabled"], true);
  EXPECT_TRUE(parent["mig"].is_null());
  EXPECT_TRUE(parent["estimated"].is_null());
  const double measured = parent["energy_j"]["counter"].get<double>();
  double shares = parent["mig_split"]["unattributed_j"].get<double>();
  for (std::size_t i = 2; i < 5; ++i) {
    const json& g = j["gpus"][i];
    EXPECT_TRUE(g["energy_j"]["counter"].is_null());
    EXPECT_TRUE(g["average_power_w"].is_null());
    EXPECT_TRUE(g["carbon_g"].is_null());
    EXPECT_EQ(g["mig"]["parent_index"], 0);
    EXPECT_EQ(g["mig"]["parent_slices"], 7);
    EXPECT_EQ(g["estimated"]["method"], "slices × activity");
    EXPECT_EQ(g["estimated"]["estimate"], true);
    shares += g["estimated"]["energy_j"].get<double>();
  }
  EXPECT_EQ(j["gpus"][2]["mig"]["gpu_instance_id"], 1);
  EXPECT_EQ(j["gpus"][2]["mig"]["profile"], "3g.40gb");
  EXPECT_EQ(j["gpus"][2]["label"], "GPU 0 GI 1 (3g.40gb)");
  EXPECT_NEAR(shares, measured, 1e-6 * measured);
  // Totals: the two GPUs' measurements, no estimate added.
  const double total = measured + j["gpus"][1]["energy_j"]["counter"].get<double>();
  EXPECT_DOUBLE_EQ(j["energy_j"]["counter"].get<double>(), total);
  // The parent is left out of the GPUs' balance; the 1g instance straggles among instances.
  EXPECT_TRUE(j["balance"].is_null());  // one whole GPU only
  ASSERT_EQ(j["mig_balance"]["stragglers"].size(), 1U);
  EXPECT_EQ(j["mig_balance"]["stragglers"][0]["gpu"], 4);
}

TEST(MigViewTest, HtmlDataLabelsInstanceLanesAndLeavesThemWithoutPower) {
  const auto a = testing::synthetic_mig_analysis();
  const json d = html_report_data(a);
  EXPECT_EQ(d["gpus"][3]["label"], "GPU 0 GI 5 (2g.20gb)");
  EXPECT_FALSE(d["gpus"][3]["mig"].is_null());
  const json& power = d["gpu_grid"]["metrics"]["power_w"]["gpus_with_data"];
  EXPECT_EQ(power[0], true);   // the parent's lane keeps its measured power
  EXPECT_EQ(power[3], false);  // an instance has none of its own
  EXPECT_EQ(d["gpu_grid"]["metrics"]["sm_active_pct"]["gpus_with_data"][3], true);
}

}  // namespace
}  // namespace gpuscope::report
