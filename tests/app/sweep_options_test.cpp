// The sweep workflow's options checked before any GPU is touched, without the command line.
#include "app/sweep/sweep_options.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "support/refusal.hpp"

namespace gpuscope::app {
namespace {

SweepOptions power_sweep() {
  SweepOptions o;
  o.power_limits = "300:700:100";
  o.command = {"python", "train.py"};
  return o;
}

std::string refusal(const SweepOptions& o) {
  return testing::usage_refusal([&] { validate(o); });
}

TEST(SweepOptionsValidation, OneKnobAndOneCommand) {
  EXPECT_EQ(refusal(power_sweep()), "");
  auto both = power_sweep();
  both.clocks = "900:1980:180";
  EXPECT_NE(refusal(both).find("one of --power-limits and --clocks"), std::string::npos);
  auto neither = power_sweep();
  neither.power_limits.clear();
  EXPECT_NE(refusal(neither).find("one of --power-limits and --clocks"), std::string::npos);
  auto no_command = power_sweep();
  no_command.command.clear();
  EXPECT_NE(refusal(no_command).find("no command to sweep"), std::string::npos);
  SweepOptions restore;  // --restore needs nothing else
  restore.restore = true;
  EXPECT_EQ(refusal(restore), "");
}

TEST(SweepOptionsValidation, RangesAndCombinations) {
  auto repeat = power_sweep();
  repeat.repeat = 0;
  EXPECT_NE(refusal(repeat).find("--repeat"), std::string::npos);
  auto eta = power_sweep();
  eta.eta = 1.5;
  EXPECT_NE(refusal(eta).find("--eta"), std::string::npos);
  auto work = power_sweep();
  work.work_regex = "step (\\d+)";
  work.work_units = 10;
  EXPECT_NE(refusal(work).find("cannot be combined"), std::string::npos);
  auto window = power_sweep();
  window.window_begin = "begin";
  window.warmup_s = 5;
  EXPECT_NE(refusal(window).find("--warmup and --window-begin"), std::string::npos);
}

TEST(SweepOptionsValidation, SlowdownAsPercentOrFraction) {
  EXPECT_DOUBLE_EQ(parse_slowdown("10%"), 0.1);
  EXPECT_DOUBLE_EQ(parse_slowdown("10 %"), 0.1);
  EXPECT_DOUBLE_EQ(parse_slowdown("0.1"), 0.1);
  EXPECT_DOUBLE_EQ(parse_slowdown("25"), 0.25);
  EXPECT_THROW(parse_slowdown("ten"), Error);
  EXPECT_THROW(parse_slowdown("-5%"), Error);
}

}  // namespace
}  // namespace gpuscope::app
