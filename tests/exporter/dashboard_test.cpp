// The shipped Grafana dashboard (grafana/gpuscope-dashboard.json) queries only names that
// `gpuscope serve` exports.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "exporter/metric_names.hpp"

namespace gpuscope::exporter {
namespace {

TEST(DashboardTest, QueriesOnlyExportedNames) {
  std::ifstream in(GPUSCOPE_TEST_DASHBOARD);
  ASSERT_TRUE(in) << GPUSCOPE_TEST_DASHBOARD;
  const nlohmann::json dashboard = nlohmann::json::parse(in);
  std::set<std::string> exported = {"gpuscope_gpu_info", "gpuscope_energy_since_start_joules_total",
                                    "gpuscope_last_sample_timestamp_seconds"};
  for (const auto& m : kMetrics) exported.insert(exported_metric(m.id, Naming::Gpuscope)->name);
  std::size_t queries = 0;
  const std::regex name("gpuscope_[a-z_]+");
  for (const auto& panel : dashboard["panels"]) {
    ASSERT_TRUE(panel.contains("targets")) << panel["title"];
    for (const auto& target : panel["targets"]) {
      const std::string expr = target["expr"];
      ++queries;
      bool any = false;
      for (std::sregex_iterator it(expr.begin(), expr.end(), name), end; it != end; ++it) {
        EXPECT_TRUE(exported.count(it->str())) << it->str() << " in " << panel["title"];
        any = true;
      }
      EXPECT_TRUE(any) << expr;
    }
  }
  EXPECT_GE(queries, 15u);
}

}  // namespace
}  // namespace gpuscope::exporter
