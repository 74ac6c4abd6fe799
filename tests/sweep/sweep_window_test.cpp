// Pure functions of src/sweep/window: the counter track (interpolation at a window's edges,
// bounded memory) and the time stamps of window markers.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "sweep/window.hpp"

namespace gpuscope::sweep {
namespace {

constexpr std::int64_t kMs = 1'000'000;

TEST(CounterTrack, InterpolatesBetweenReadingsAndHoldsOutsideThem) {
  CounterTrack track;
  EXPECT_FALSE(track.at(0));
  track.add(100 * kMs, 1000);
  track.add(200 * kMs, 1500);  // 5 mJ per ms
  track.add(400 * kMs, 1600);
  EXPECT_DOUBLE_EQ(*track.at(100 * kMs), 1000);
  EXPECT_DOUBLE_EQ(*track.at(150 * kMs), 1250);
  EXPECT_DOUBLE_EQ(*track.at(200 * kMs), 1500);
  EXPECT_DOUBLE_EQ(*track.at(300 * kMs), 1550);
  EXPECT_DOUBLE_EQ(*track.at(50 * kMs), 1000);
  EXPECT_DOUBLE_EQ(*track.at(900 * kMs), 1600);
  // A window between readings: exactly the energy of that span.
  EXPECT_DOUBLE_EQ(*track.at(190 * kMs) - *track.at(110 * kMs), 400);
}

TEST(CounterTrack, IgnoresReadingsOutOfOrder) {
  CounterTrack track;
  track.add(200 * kMs, 10);
  track.add(100 * kMs, 999);
  EXPECT_EQ(track.size(), 1u);
  EXPECT_DOUBLE_EQ(*track.at(100 * kMs), 10);
}

TEST(CounterTrack, ThinsToStayBoundedAndKeepsTheEnds) {
  CounterTrack track(8);
  // A steady 1 mJ per ms: interpolation stays exact however far apart the kept readings are.
  for (std::int64_t i = 0; i <= 100; ++i) track.add(i * kMs, static_cast<double>(i));
  EXPECT_LE(track.size(), 8u);
  EXPECT_GE(track.size(), 4u);
  EXPECT_DOUBLE_EQ(*track.at(0), 0);
  EXPECT_DOUBLE_EQ(*track.at(100 * kMs), 100);
  EXPECT_NEAR(*track.at(37 * kMs), 37, 1e-9);
  EXPECT_NEAR(*track.at(99 * kMs + kMs / 2), 99.5, 1e-9);
}

std::smatch match(const std::regex& regex, const std::string& line) {
  static std::string kept;  // the match refers into the string
  kept = line;
  std::smatch m;
  EXPECT_TRUE(std::regex_search(kept, m, regex)) << line;
  return m;
}

TEST(MarkerTime, UsesTheJobsStampWhenItLiesBetweenStartAndArrival) {
  const std::regex r = compile_marker("begins at ([0-9.]+) s", "--window-begin");
  const auto t = marker_time(match(r, "work begins at 12.250000000 s"), 12'000 * kMs, 13'000 * kMs);
  EXPECT_TRUE(t.from_job);
  EXPECT_EQ(t.mono_ns, 12'250 * kMs);
  EXPECT_TRUE(t.problem.empty());
}

TEST(MarkerTime, FallsBackToTheArrivalWithoutAGroupOrWithAStampOfAnotherClock) {
  const std::regex plain = compile_marker("training starts", "--window-begin");
  auto t = marker_time(match(plain, "training starts now"), 12'000 * kMs, 13'000 * kMs);
  EXPECT_FALSE(t.from_job);
  EXPECT_EQ(t.mono_ns, 13'000 * kMs);
  EXPECT_TRUE(t.problem.empty());

  const std::regex stamped = compile_marker("at ([0-9.e+]+)", "--window-begin");
  // A wall-clock time (time.time()) is not CLOCK_MONOTONIC: far after the arrival.
  t = marker_time(match(stamped, "at 1732280000.5"), 12'000 * kMs, 13'000 * kMs);
  EXPECT_FALSE(t.from_job);
  EXPECT_EQ(t.mono_ns, 13'000 * kMs);
  EXPECT_NE(t.problem.find("CLOCK_MONOTONIC"), std::string::npos) << t.problem;
  // Before the job started.
  t = marker_time(match(stamped, "at 11.5"), 12'000 * kMs, 13'000 * kMs);
  EXPECT_FALSE(t.from_job);
  // Not a number.
  t = marker_time(match(stamped, "at ..."), 12'000 * kMs, 13'000 * kMs);
  EXPECT_FALSE(t.from_job);
  EXPECT_NE(t.problem.find("not a number"), std::string::npos) << t.problem;
  // Within the millisecond of slack after the arrival: clamped to it.
  t = marker_time(match(stamped, "at 13.0005"), 12'000 * kMs, 13'000 * kMs);
  EXPECT_TRUE(t.from_job);
  EXPECT_EQ(t.mono_ns, 13'000 * kMs);
}

TEST(MarkerTime, PatternsWithTwoGroupsOrBadSyntaxAreUsageErrors) {
  for (const char* bad : {"(a)(b)", "begins at ([0-9.]+"}) {
    try {
      compile_marker(bad, "--window-end");
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), 2);
      EXPECT_NE(std::string(e.what()).find("--window-end"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace gpuscope::sweep
