// The words completion offers for options whose set the command line's definitions do not say
// (app::completion_values) against the parsers that check those options: each word is accepted,
// and, where the parser's result is an enum, every value of it is reachable from the list.
#include "app/help/command_docs.hpp"

#include <gtest/gtest.h>

#include <set>

#include "analyze/carbon.hpp"
#include "analyze/trimming.hpp"
#include "carbon/grid_source.hpp"
#include "collect/backend.hpp"
#include "core/error.hpp"
#include "core/metrics.hpp"
#include "ingest/format.hpp"
#include "phases/mark_protocol.hpp"
#include "report/analysis_view.hpp"
#include "report/plots/plots.hpp"

namespace gpuscope {
namespace {

const std::vector<std::string>& words(const std::string& option) {
  static const docgen::ValueLists values = app::completion_values();
  const auto found = values.find(option);
  if (found == values.end()) throw std::runtime_error("no completion words for " + option);
  return found->second;
}

TEST(CompletionValues, TrimModesAreTheParsersEvery) {
  std::set<analyze::TrimMode> modes;
  for (const std::string& word : words("--detect-outliers")) {
    modes.insert(analyze::parse_trim_mode(word));
  }
  EXPECT_EQ(modes.size(), 4u);
  EXPECT_THROW(analyze::parse_trim_mode("sideways"), Error);
}

TEST(CompletionValues, ViewsAreTheParsersEvery) {
  std::set<report::View> views;
  for (const std::string& word : words("--aggregate")) views.insert(report::parse_view(word));
  EXPECT_EQ(views.size(), static_cast<std::size_t>(report::View::Node) + 1);
}

TEST(CompletionValues, PlotFormatsAreTheParsersEvery) {
  std::set<report::plots::PlotFormat> formats;
  for (const std::string& word : words("--plot-format")) {
    formats.insert(report::plots::parse_plot_format(word));
  }
  EXPECT_EQ(formats.size(), 3u);
  std::set<std::string> report_formats(words("--format").begin(), words("--format").end());
  for (const std::string& word : words("--plot-format")) EXPECT_TRUE(report_formats.contains(word));
  EXPECT_TRUE(report_formats.contains("html"));
}

TEST(CompletionValues, MarkKindsAreTheParsersEvery) {
  std::set<phases::MarkKind> kinds;
  for (const std::string& word : words("kind")) {
    const auto kind = phases::mark_kind_from_text(word);
    ASSERT_TRUE(kind) << word;
    kinds.insert(*kind);
  }
  EXPECT_EQ(kinds.size(), 3u);
}

TEST(CompletionValues, CarbonSourcesAreAccepted) {
  for (const std::string& word : words("--carbon-source")) {
    // The national figures where the source has them, else a zone (Electricity Maps needs one).
    bool accepted = false;
    for (const char* region : {"", "DE"}) {
      carbon::GridOptions options;
      options.source = word;
      options.region = region;
      try {
        carbon::grid_request(options, "a-token");
        accepted = true;
      } catch (const Error&) {
      }
    }
    EXPECT_TRUE(accepted) << word;
  }
  carbon::GridOptions unknown;
  unknown.source = "moon";
  EXPECT_THROW(carbon::grid_request(unknown, ""), Error);
}

TEST(CompletionValues, MetricsRegionsAndFormatsComeFromTheirLists) {
  for (const std::string& word : words("--metric")) {
    if (word != "all") {
      EXPECT_TRUE(metric_by_name(word)) << word;
    }
  }
  EXPECT_EQ(words("--metric").size(), kMetrics.size() + 1);
  for (const std::string& word : words("--region")) EXPECT_TRUE(analyze::find_region(word)) << word;
  EXPECT_EQ(words("--region").size(), analyze::builtin_regions().size());
  EXPECT_EQ(words("--input-format").size(), ingest::formats().size());
}

TEST(CompletionValues, ScenariosAreTheShippedOnes) {
  // The test binary is not beside share/gpuscope: the scenarios it finds are none or the
  // build tree's; either way the list is what `gpuscope scenarios` would say.
  const auto shipped = collect::shipped_scenarios();
  const docgen::ValueLists values = app::completion_values();
  const auto found = values.find("--simulate");
  EXPECT_EQ(found == values.end() ? 0u : found->second.size(), shipped.size());
}

}  // namespace
}  // namespace gpuscope
