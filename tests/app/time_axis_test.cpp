// Where samples land on the analysis' time axis: RunClock's 64-bit fast path gives the same
// doubles as 128-bit arithmetic, at ordinary stamps and at the ends of int64 (a hostile file).
#include "load/time_axis.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace gpuscope::load {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

// at() and step_s() as they were written before the fast path: all in 128 bits.
double wide_at(const RunClock& c, std::int64_t mono_ns) {
  const WideInt since = static_cast<WideInt>(mono_ns) - c.start_mono_ns;
  if (since < -RunClock::kSlackNs) return kNaN;
  if (c.end_mono_ns && static_cast<WideInt>(mono_ns) - *c.end_mono_ns > RunClock::kSlackNs) {
    return kNaN;
  }
  return c.offset_s + static_cast<double>(since) / 1e9;
}
double wide_step(const RunClock& c, std::int64_t wall_ns, std::int64_t mono_ns) {
  const WideInt now = static_cast<WideInt>(wall_ns) - mono_ns;
  const WideInt start = static_cast<WideInt>(c.start_wall_ns) - c.start_mono_ns;
  return static_cast<double>(now - start) / 1e9;
}

void expect_same(double a, double b, const char* what) {
  if (std::isnan(a) || std::isnan(b)) {
    EXPECT_EQ(std::isnan(a), std::isnan(b)) << what;
  } else {
    EXPECT_EQ(std::bit_cast<std::uint64_t>(a), std::bit_cast<std::uint64_t>(b)) << what;
  }
}

TEST(RunClock, SixtyFourBitPathGivesTheSameTimesAsWideArithmetic) {
  std::mt19937_64 rng(5);
  const std::vector<std::int64_t> edges = {
      kMin, kMin + 1, -1, 0, 1, kMax - 1, kMax, 1'700'000'000'000'000'000, 123'456'789'012};
  std::vector<RunClock> clocks;
  for (std::int64_t start : edges) {
    for (std::int64_t wall :
         {std::int64_t{0}, kMax, kMin, std::int64_t{1'732'000'000} * 1000000000}) {
      RunClock c;
      c.offset_s = 12.5;
      c.start_mono_ns = start;
      c.start_wall_ns = wall;
      clocks.push_back(c);
      c.end_mono_ns = start > kMax - 3'600'000'000'000 ? kMax : start + 3'600'000'000'000;
      clocks.push_back(c);
    }
  }
  std::vector<std::int64_t> stamps = edges;
  for (int i = 0; i < 2000; ++i) stamps.push_back(static_cast<std::int64_t>(rng()));
  for (const RunClock& c : clocks) {
    // Stamps around the run's start, as real samples are, and anywhere.
    for (std::int64_t d :
         {std::int64_t{-3'000'000'000}, std::int64_t{0}, std::int64_t{60'000'000'000}}) {
      std::int64_t near = 0;
      if (!__builtin_add_overflow(c.start_mono_ns, d, &near)) stamps.push_back(near);
    }
    for (std::int64_t mono : stamps) {
      expect_same(c.at(mono), wide_at(c, mono), "at");
      for (std::int64_t wall : {mono, kMax, kMin, static_cast<std::int64_t>(rng())}) {
        expect_same(c.step_s(wall, mono), wide_step(c, wall, mono), "step_s");
      }
    }
  }
}

TEST(PlaceSamples, PlacesByTheMonotonicClockAndReportsSteps) {
  RunClock c;
  c.offset_s = 2;
  c.start_mono_ns = 1'000'000'000;
  c.start_wall_ns = 1'732'000'000'000'000'000;
  c.end_mono_ns = 11'000'000'000;
  // Three samples 1 s apart; the wall clock steps by +30 s before the third.
  const std::vector<std::int64_t> mono = {1'000'000'000, 2'000'000'000, 3'000'000'000,
                                          99'000'000'000};
  const std::vector<std::int64_t> wall = {c.start_wall_ns, c.start_wall_ns + 1'000'000'000,
                                          c.start_wall_ns + 32'000'000'000,
                                          c.start_wall_ns + 98'000'000'000};
  std::vector<double> t;
  const TimeCheck check = place_samples(c, wall, mono, 0, t);
  ASSERT_EQ(t.size(), 4U);
  EXPECT_EQ(t[0], 2.0);
  EXPECT_EQ(t[1], 3.0);
  EXPECT_EQ(t[2], 4.0);
  EXPECT_TRUE(std::isnan(t[3]));  // past the run's end and its slack
  EXPECT_EQ(check.outside, 1U);
  EXPECT_EQ(check.stepped, 1U);
  EXPECT_EQ(check.largest_step_s, 30.0);
  EXPECT_EQ(check.first_step_at_s, 2.0);
}

}  // namespace
}  // namespace gpuscope::load
