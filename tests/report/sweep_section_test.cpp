// The sweep's HTML section (the standalone sweep page and `gpuscope report` of a sweep database):
// what it shows, the recommendations with their change against the default, escaping, a clock
// sweep's baseline, a sweep that stopped early, and its place in the report.
#include "report/sweep_section.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "report/html_report.hpp"
#include "synthetic_analysis.hpp"

namespace gpuscope::report {
namespace {

sweep::Trial trial(int number, double setting, bool baseline, double time_s, double energy_j) {
  sweep::Trial t;
  t.number = number;
  t.setting = setting;
  t.baseline = baseline;
  t.status = sweep::TrialStatus::Ok;
  t.time_s = time_s;
  t.energy_j = energy_j;
  t.avg_power_w = energy_j / time_s;
  t.work_units = 1000;
  t.throughput = 1000 / time_s;
  t.energy_per_unit_j = energy_j / 1000;
  return t;
}

sweep::SweepRecord record() {
  sweep::SweepRecord r;
  r.command = {"python", "train.py", "--tag", "<b>&"};
  r.gpus = {0, 2};
  r.status = sweep::SweepStatus::Finished;
  r.restored = true;
  r.p_max_w = 1400;
  r.window_begin = "work begins at ([0-9.]+) s";
  r.plan = {{700, true}, {300, false}};
  r.trials = {trial(1, 700, true, 0.5, 600), trial(2, 300, false, 0.659, 395.4)};
  sweep::SettingSummary base;
  base.setting = 700;
  base.baseline = true;
  base.trials = 1;
  base.time_s = {1, 0.5, 0.5, 0.5, 0};
  base.energy_j = {1, 600, 600, 600, 0};
  sweep::SettingSummary capped;
  capped.setting = 300;
  capped.trials = 1;
  capped.time_s = {1, 0.659, 0.659, 0.659, 0};
  capped.energy_j = {1, 395.4, 395.4, 395.4, 0};
  r.summaries = {base, capped};
  sweep::Recommendation e{"min_energy", "minimum energy", 300, 395.4, 0.659, 34.1, 31.8, ""};
  sweep::Recommendation b{
      "min_energy_bounded", "minimum energy with slowdown ≤ 10 %", std::nullopt, 0, 0, 0, 0, ""};
  r.recommendations = {e, b};
  return r;
}

TEST(SweepSection, ShowsTheRecommendationsSettingsPlotAndTrials) {
  const std::vector<std::uint8_t> png = {0x89, 'P', 'N', 'G'};
  const std::string html = sweep_section_html(record(), png);
  EXPECT_EQ(html.rfind("<section id=\"sweep\" class=\"sweep\">", 0), 0u) << html;
  EXPECT_NE(html.find("<h2>Power-limit sweep</h2>"), std::string::npos);
  EXPECT_NE(html.find("on GPUs 0, 2"), std::string::npos) << html;
  EXPECT_NE(html.find("against the default 700 W"), std::string::npos) << html;
  // The recommendation, its energy and time, and the change against the default.
  EXPECT_NE(html.find("<tr data-selector=\"min_energy\" data-setting=\"300\"><td>minimum "
                      "energy</td><td>300 W</td><td>395.4</td><td>0.659</td><td>-34.1 %</td>"
                      "<td>+31.8 %</td></tr>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("none qualifies"), std::string::npos);
  EXPECT_NE(html.find("<tr data-setting=\"700\"><td>700 W (default)</td><td>0.500</td>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("src=\"data:image/png;base64,iVBORw==\""), std::string::npos);
  EXPECT_NE(html.find("<tr data-trial=\"2\"><td>2</td><td>300 W</td>"), std::string::npos);
  // The job's command is text, never markup.
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  // Shown as a shell would take it (util::shell_command_line), the metacharacters quoted.
  EXPECT_NE(html.find("--tag &#39;&lt;b&gt;&amp;&#39;"), std::string::npos);
  EXPECT_NE(html.find("line matching <code>work begins at ([0-9.]+) s</code>"), std::string::npos);
}

TEST(SweepSection, AClockSweepAndASweepThatStoppedEarly) {
  sweep::SweepRecord r = record();
  r.knob = sweep::Knob::SmClock;
  r.plan = {{1980, true}, {1000, false}};
  r.trials[0].setting = 1980;
  r.trials[1].setting = 1000;
  r.trials[1].status = sweep::TrialStatus::Interrupted;
  r.summaries[0].setting = 1980;
  r.summaries[1].setting = 1000;
  r.status = sweep::SweepStatus::Interrupted;
  r.recommendations.clear();
  const std::string html = sweep_section_html(r, {}, "sweep-2");
  EXPECT_EQ(html.rfind("<section id=\"sweep-2\" class=\"sweep\">", 0), 0u);
  EXPECT_NE(html.find("<h2>Locked-clock sweep</h2>"), std::string::npos);
  EXPECT_NE(html.find("<td>unlocked</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("No recommendations: the sweep was interrupted"), std::string::npos);
  EXPECT_NE(html.find("The plot could not be drawn"), std::string::npos);
  EXPECT_NE(html.find("<td>interrupted</td>"), std::string::npos);
}

TEST(SweepSection, IsTheStandalonePageAndTheReportsFirstSection) {
  const std::string section = sweep_section_html(record(), {});
  const std::string page = sweep_page_html(record(), {});
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find(section), std::string::npos);

  HtmlReportOptions options;
  options.sections_html = {section};
  const std::string report = html_report(testing::synthetic_analysis(2, 10), options);
  const auto main = report.find("<main id=\"report\">");
  ASSERT_NE(main, std::string::npos);
  EXPECT_EQ(report.find(section), main + std::string("<main id=\"report\">").size());
  EXPECT_EQ(html_report(testing::synthetic_analysis(2, 10), {}).find("class=\"sweep\""),
            std::string::npos);
}

}  // namespace
}  // namespace gpuscope::report
