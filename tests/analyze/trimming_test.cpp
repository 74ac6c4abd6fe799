#include "analyze/trimming.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/error.hpp"

namespace gpuscope::analyze {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// `count` bins at `level`, appended to `series`.
void append(std::vector<double>& series, std::size_t count, double level) {
  series.insert(series.end(), count, level);
}

// A busy level with deterministic noise of ±0.2 around 0.7.
std::vector<double> noisy_busy(std::size_t count) {
  std::vector<double> series;
  for (std::size_t i = 0; i < count; ++i) {
    series.push_back(0.7 + 0.2 * std::sin(static_cast<double>(i) * 1.7));
  }
  return series;
}

TEST(DetectIdle, IdlePrefixCutExactly) {
  std::vector<double> series;
  append(series, 6, 0.02);
  append(series, 24, 0.9);
  const TrimResult trim = detect_idle(series, 0.5, TrimMode::Leading);
  EXPECT_EQ(trim.begin, 6u);
  EXPECT_EQ(trim.end, 30u);
  EXPECT_DOUBLE_EQ(trim.leading_s, 3.0);
  EXPECT_EQ(trim.trailing_s, 0);
}

TEST(DetectIdle, IdleSuffixCutOnlyWhenAsked) {
  std::vector<double> series;
  append(series, 24, 0.8);
  append(series, 6, 0.0);
  const TrimResult trailing = detect_idle(series, 2.0, TrimMode::Trailing);
  EXPECT_EQ(trailing.begin, 0u);
  EXPECT_EQ(trailing.end, 24u);
  EXPECT_DOUBLE_EQ(trailing.trailing_s, 12.0);

  const TrimResult leading = detect_idle(series, 2.0, TrimMode::Leading);
  EXPECT_EQ(leading.begin, 0u);
  EXPECT_EQ(leading.end, 30u);

  const TrimResult none = detect_idle(series, 2.0, TrimMode::None);
  EXPECT_EQ(none.begin, 0u);
  EXPECT_EQ(none.end, 30u);
}

TEST(DetectIdle, BothEdges) {
  // The longer idle tail must not pull the leading change point to the far end.
  std::vector<double> series;
  append(series, 5, 0.0);
  append(series, 28, 0.8);
  append(series, 7, 0.0);
  const TrimResult all = detect_idle(series, 1.0, TrimMode::All);
  EXPECT_EQ(all.begin, 5u);
  EXPECT_EQ(all.end, 33u);
  EXPECT_DOUBLE_EQ(all.leading_s, 5.0);
  EXPECT_DOUBLE_EQ(all.trailing_s, 7.0);

  const TrimResult leading = detect_idle(series, 1.0, TrimMode::Leading);
  EXPECT_EQ(leading.begin, 5u);
  EXPECT_EQ(leading.end, 40u);
  const TrimResult trailing = detect_idle(series, 1.0, TrimMode::Trailing);
  EXPECT_EQ(trailing.begin, 0u);
  EXPECT_EQ(trailing.end, 33u);
}

// 20 s idle, a 2 s linear warm-up to full activity, then compute, as bin averages.
std::vector<double> warm_up(double bin_s, double idle, double busy, double total_s) {
  std::vector<double> series;
  const auto activity = [&](double t) {
    if (t < 20) return idle;
    if (t < 22) return idle + (busy - idle) * (t - 20) / 2;
    return busy;
  };
  for (double start = 0; start + bin_s / 2 < total_s; start += bin_s) {
    // Average over the bin by the midpoint rule on fine steps (exact for piecewise linear).
    double sum = 0;
    constexpr int kSteps = 1000;
    for (int k = 0; k < kSteps; ++k) sum += activity(start + (k + 0.5) * bin_s / kSteps);
    series.push_back(sum / kSteps);
  }
  return series;
}

TEST(DetectIdle, WarmUpRampCutAtItsHalfwayPoint) {
  // 1 s bins: bin 20 averages 0.25, bin 21 0.75; halfway (≈ 0.5) is first reached in bin 21.
  const auto one_second = warm_up(1.0, 0.0, 1.0, 100);
  const TrimResult coarse = detect_idle(one_second, 1.0, TrimMode::Leading);
  EXPECT_EQ(coarse.begin, 21u);
  EXPECT_DOUBLE_EQ(coarse.leading_s, 21.0);

  // 0.5 s bins: the ramp spans bins 40..43 (0.125, 0.375, 0.625, 0.875): cut at bin 42, 21 s.
  const auto half_second = warm_up(0.5, 0.0, 1.0, 100);
  const TrimResult fine = detect_idle(half_second, 0.5, TrimMode::Leading);
  EXPECT_EQ(fine.begin, 42u);
  EXPECT_DOUBLE_EQ(fine.leading_s, 21.0);

  // Not-quite-idle and not-quite-full levels: halfway 0.475 is crossed in bin 21 (0.6875).
  const auto offset_levels = warm_up(1.0, 0.05, 0.9, 100);
  const TrimResult offset = detect_idle(offset_levels, 1.0, TrimMode::All);
  EXPECT_EQ(offset.begin, 21u);
  EXPECT_EQ(offset.end, offset_levels.size());
}

TEST(DetectIdle, NoisyWarmUpCutWithinTheRamp) {
  auto series = warm_up(0.5, 0.03, 0.85, 120);
  for (std::size_t i = 0; i < series.size(); ++i) {
    series[i] = std::max(0.0, series[i] + 0.05 * std::sin(static_cast<double>(i) * 2.3));
  }
  const TrimResult trim = detect_idle(series, 0.5, TrimMode::All);
  EXPECT_GE(trim.leading_s, 20.0);
  EXPECT_LE(trim.leading_s, 22.0);
  EXPECT_EQ(trim.end, series.size());
}

TEST(DetectIdle, IdleThroughoutKeptWhole) {
  const std::vector<double> flat(50, 0.0);
  TrimResult trim = detect_idle(flat, 1.0, TrimMode::All);
  EXPECT_EQ(trim.begin, 0u);
  EXPECT_EQ(trim.end, 50u);

  // Relatively, the first 10 bins are far below the rest (0.01 vs 0.1), but only by 0.09.
  std::vector<double> low;
  append(low, 10, 0.01);
  append(low, 40, 0.1);
  trim = detect_idle(low, 1.0, TrimMode::All);
  EXPECT_EQ(trim.begin, 0u);
  EXPECT_EQ(trim.end, 50u);
}

TEST(DetectIdle, NoisyBusySeriesNotCut) {
  const auto series = noisy_busy(100);
  const TrimResult trim = detect_idle(series, 1.0, TrimMode::All);
  EXPECT_EQ(trim.begin, 0u);
  EXPECT_EQ(trim.end, 100u);
  EXPECT_EQ(trim.leading_s, 0);
  EXPECT_EQ(trim.trailing_s, 0);
}

TEST(DetectIdle, NoisyBusyAfterIdlePrefix) {
  std::vector<double> series;
  append(series, 12, 0.03);
  const auto busy = noisy_busy(88);
  series.insert(series.end(), busy.begin(), busy.end());
  const TrimResult trim = detect_idle(series, 1.0, TrimMode::All);
  EXPECT_EQ(trim.begin, 12u);
  EXPECT_EQ(trim.end, 100u);
}

TEST(DetectIdle, ShortJobInALongRunKeepsBothChangePoints) {
  // 18 % idle, a 38 % job, then 44 % idle: with a single change point the long idle tail made
  // the best split land past the job's end, beyond the 30 % limit, and nothing was cut.
  std::vector<double> series;
  append(series, 18, 0.0);
  append(series, 38, 0.9);
  append(series, 44, 0.0);
  const TrimResult leading = detect_idle(series, 0.05, TrimMode::Leading);
  EXPECT_EQ(leading.begin, 18u);
  EXPECT_EQ(leading.end, 100u);
  // The tail is 44 % of the run: more than an edge, so it stays.
  const TrimResult all = detect_idle(series, 0.05, TrimMode::All);
  EXPECT_EQ(all.begin, 18u);
  EXPECT_EQ(all.end, 100u);
}

TEST(DetectIdle, LongSeriesCutToTheBinOnTheCoarseGrid) {
  // A day at 50 ms (1.7 M bins): the change points are fitted on a grid of about 2000
  // candidates and then placed on the exact bin by the halfway rule.
  std::vector<double> series;
  append(series, 100'003, 0.01);
  append(series, 1'500'000, 0.8);
  append(series, 127'997, 0.02);
  const TrimResult all = detect_idle(series, 0.05, TrimMode::All);
  EXPECT_EQ(all.begin, 100'003u);
  EXPECT_EQ(all.end, 1'600'003u);
}

TEST(DetectIdle, IdleBeyondThirtyPercentNotCut) {
  // 40 % idle is not a warm-up to leave out: it is a large part of the run.
  std::vector<double> series;
  append(series, 40, 0.0);
  append(series, 60, 0.9);
  const TrimResult trim = detect_idle(series, 1.0, TrimMode::Leading);
  EXPECT_EQ(trim.begin, 0u);
  EXPECT_EQ(trim.end, 100u);
}

TEST(DetectIdle, NaNBinsTakeNoPart) {
  // No GPU reported in bins 0..2; idle 3..8; busy 9..29 with a hole at 15..16; none after 27.
  std::vector<double> series;
  append(series, 3, kNaN);
  append(series, 6, 0.0);
  append(series, 6, 0.9);
  append(series, 2, kNaN);
  append(series, 10, 0.9);
  append(series, 3, kNaN);
  const TrimResult trim = detect_idle(series, 1.0, TrimMode::All);
  EXPECT_EQ(trim.begin, 9u);
  EXPECT_DOUBLE_EQ(trim.leading_s, 9.0);
  EXPECT_EQ(trim.end, 30u);  // the trailing NaN bins are not an idle tail
  EXPECT_EQ(trim.trailing_s, 0);

  const std::vector<double> nothing(20, kNaN);
  const TrimResult empty = detect_idle(nothing, 1.0, TrimMode::All);
  EXPECT_EQ(empty.begin, 0u);
  EXPECT_EQ(empty.end, 20u);
}

TEST(DetectIdle, ShortSeriesNotCut) {
  const std::vector<double> four = {0, 0, 1, 1};
  TrimResult trim = detect_idle(four, 1.0, TrimMode::All);
  EXPECT_EQ(trim.begin, 0u);
  EXPECT_EQ(trim.end, 4u);

  // Ten bins but only four reporting.
  const std::vector<double> sparse = {0, kNaN, kNaN, 0, kNaN, 1, kNaN, kNaN, 1, kNaN};
  trim = detect_idle(sparse, 1.0, TrimMode::All);
  EXPECT_EQ(trim.begin, 0u);
  EXPECT_EQ(trim.end, 10u);

  const TrimResult empty = detect_idle({}, 1.0, TrimMode::All);
  EXPECT_EQ(empty.begin, 0u);
  EXPECT_EQ(empty.end, 0u);
}

TEST(ParseTrimMode, NamesAndRefusal) {
  EXPECT_EQ(parse_trim_mode("leading"), TrimMode::Leading);
  EXPECT_EQ(parse_trim_mode("trailing"), TrimMode::Trailing);
  EXPECT_EQ(parse_trim_mode("all"), TrimMode::All);
  EXPECT_EQ(parse_trim_mode("none"), TrimMode::None);
  try {
    parse_trim_mode("both");
    FAIL() << "no error for an unknown mode";
  } catch (const Error& error) {
    EXPECT_EQ(error.exit_code(), 2);
    const std::string text = error.what();
    EXPECT_NE(text.find("'both'"), std::string::npos) << text;
    EXPECT_NE(text.find("leading, trailing, all and none"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace gpuscope::analyze
