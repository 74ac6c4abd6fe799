// Outlier flagging, summaries and the four selectors, on hand-computed numbers.
#include <gtest/gtest.h>

#include <cmath>

#include "sweep/plan.hpp"
#include "sweep/selection.hpp"

namespace gpuscope::sweep {
namespace {

TEST(SweepOutliers, NeedThreeValues) {
  EXPECT_EQ(flag_outliers({1.0, 5.0}), (std::vector<bool>{false, false}));
}

TEST(SweepOutliers, FarRepeatIsFlagged) {
  // median 10.0, deviations 0, 0.1, 0.1, 0, 5 → MAD 0.1; 0.6745 · 5 / 0.1 = 33.7 > 3.5 and
  // 5 / 10 = 50 % > 5 %.
  EXPECT_EQ(flag_outliers({10.0, 10.1, 9.9, 10.0, 15.0}),
            (std::vector<bool>{false, false, false, false, true}));
}

TEST(SweepOutliers, JitterBelowFivePercentIsNotAnOutlier) {
  // 10.4 lies 33.7 robust deviations away but only 4 % from the median.
  EXPECT_EQ(flag_outliers({10.0, 10.01, 9.99, 10.4}),
            (std::vector<bool>{false, false, false, false}));
}

TEST(SweepOutliers, IdenticalRepeatsAndOneOff) {
  // MAD 0: anything off the median by more than 5 % is an outlier.
  EXPECT_EQ(flag_outliers({2.0, 2.0, 2.0, 3.0}), (std::vector<bool>{false, false, false, true}));
}

TEST(SweepSpread, MeanMinMaxSampleStddev) {
  const Spread s = spread_of({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_EQ(s.count, 8);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_DOUBLE_EQ(s.min, 2);
  EXPECT_DOUBLE_EQ(s.max, 9);
  EXPECT_NEAR(s.stddev, std::sqrt(32.0 / 7.0), 1e-12);
  EXPECT_EQ(spread_of({3}).stddev, 0);
  EXPECT_EQ(spread_of({}).count, 0);
}

Trial trial(double setting, int repeat, double time, double energy, bool baseline = false) {
  Trial t;
  t.setting = setting;
  t.baseline = baseline;
  t.repeat = repeat;
  t.status = sweep::TrialStatus::Ok;
  t.time_s = time;
  t.energy_j = energy;
  t.avg_power_w = energy / time;
  return t;
}

TEST(SweepSummary, OutliersAreLeftOutAndCounted) {
  const auto plan = make_plan({300}, 700);
  std::vector<Trial> trials = {trial(700, 1, 1.00, 600, true), trial(700, 2, 1.02, 606, true),
                               trial(700, 3, 0.98, 594, true), trial(700, 4, 2.00, 1200, true),
                               trial(300, 1, 1.30, 390)};
  mark_outliers(trials);
  EXPECT_TRUE(trials[3].outlier);
  EXPECT_FALSE(trials[0].outlier);
  const auto summaries = summarize(plan, trials);
  ASSERT_EQ(summaries.size(), 2u);
  EXPECT_EQ(summaries[0].setting, 700);
  EXPECT_EQ(summaries[0].trials, 4);
  EXPECT_EQ(summaries[0].outliers, 1);
  EXPECT_EQ(summaries[0].energy_j.count, 3);
  EXPECT_DOUBLE_EQ(summaries[0].energy_j.mean, 600);
  EXPECT_DOUBLE_EQ(summaries[0].time_s.max, 1.02);
  EXPECT_DOUBLE_EQ(summaries[1].time_s.mean, 1.30);
}

// Hand-made sweep (energy J, time s) per cap, baseline 700 W:
//   700: 600, 1.00   500: 540, 1.07   400: 470, 1.18   300: 400, 1.32   200: 330, 1.80
// E·T: 600, 577.8, 554.6, 528, 594 → 300 W.  Slowdown ≤ 10 %: 700 and 500 → 500 W.
// Zeus, η = 0.5, P_max 700: 0.5·E + 350·T = 650, 644.5, 648, 662, 795 → 500 W;
// η = 0.9 (energy weighs more): 0.9·E + 70·T = 610, 560.9, 505.6, 452.4, 423 → 200 W.
std::vector<SettingSummary> hand_made() {
  const auto plan = make_plan({200, 300, 400, 500}, 700);
  std::vector<Trial> trials = {trial(700, 1, 1.00, 600, true), trial(500, 1, 1.07, 540),
                               trial(400, 1, 1.18, 470), trial(300, 1, 1.32, 400),
                               trial(200, 1, 1.80, 330)};
  return summarize(plan, trials);
}

TEST(SweepRecommend, FourSelectorsOnHandComputedNumbers) {
  const auto r = recommend(hand_made(), {0.10, 0.5, 700});
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].selector, "min_energy");
  EXPECT_EQ(r[0].setting, 200);
  EXPECT_NEAR(r[0].energy_saving_pct, 45.0, 1e-9);  // (600 − 330) / 600
  EXPECT_NEAR(r[0].time_change_pct, 80.0, 1e-9);
  EXPECT_EQ(r[1].selector, "min_edp");
  EXPECT_EQ(r[1].setting, 300);
  EXPECT_EQ(r[2].selector, "min_energy_bounded");
  EXPECT_EQ(r[2].setting, 500);
  EXPECT_NEAR(r[2].energy_saving_pct, 10.0, 1e-9);
  EXPECT_NEAR(r[2].time_change_pct, 7.0, 1e-9);
  EXPECT_EQ(r[3].selector, "zeus_cost");
  EXPECT_EQ(r[3].setting, 500);
}

TEST(SweepRecommend, BoundAndEtaChangeTheChoice) {
  const auto r = recommend(hand_made(), {0.20, 0.9, 700});
  EXPECT_EQ(r[2].setting, 400);  // 1.18 ≤ 1.20
  EXPECT_EQ(r[3].setting, 200);
  const auto none = recommend(hand_made(), {0.0, 0.5, 700});
  EXPECT_EQ(none[2].setting, 700);  // only the baseline meets a 0 % bound
}

TEST(SweepRecommend, NothingWithoutABaseline) {
  const auto plan = make_plan({300}, 700);
  const auto summaries = summarize(plan, {trial(300, 1, 1.3, 400)});
  EXPECT_TRUE(recommend(summaries, {}).empty());
}

}  // namespace
}  // namespace gpuscope::sweep
