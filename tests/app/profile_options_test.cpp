// The profile workflow's options checked before anything starts, without the command line.
#include "app/profile/profile_options.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "support/refusal.hpp"

namespace gpuscope::app {
namespace {

ProfileOptions with_command() {
  ProfileOptions o;
  o.command = {"python", "train.py"};
  return o;
}

// The message of the usage error validate() throws, or "" when it accepts the options.
std::string refusal(const ProfileOptions& o) {
  return testing::usage_refusal([&] { validate(o); });
}

TEST(ProfileOptionsValidation, AcceptsTheDefaults) {
  EXPECT_EQ(refusal(with_command()), "");
}

TEST(ProfileOptionsValidation, NeedsExactlyOneCommand) {
  EXPECT_NE(refusal(ProfileOptions{}).find("no command to profile"), std::string::npos);
  auto both = with_command();
  both.wrap = "python train.py";
  EXPECT_NE(refusal(both).find("both --wrap and a command"), std::string::npos);
  ProfileOptions wrapped;
  wrapped.wrap = "python train.py";
  EXPECT_EQ(refusal(wrapped), "");
}

TEST(ProfileOptionsValidation, SamplingIntervalsHaveFloorsAndAnOrder) {
  auto fast = with_command();
  fast.sampling_ms = kMinSamplingMs - 1;
  EXPECT_NE(refusal(fast).find("below the floor"), std::string::npos);
  auto power = with_command();
  power.power_sampling_ms = kMinPowerSamplingMs / 2;
  EXPECT_NE(refusal(power).find("--power-sampling-ms"), std::string::npos);
  auto slower = with_command();
  slower.power_sampling_ms = 200;  // slower than the main 100 ms
  EXPECT_NE(refusal(slower).find("slower than --sampling-ms"), std::string::npos);
  auto ok = with_command();
  ok.power_sampling_ms = 10;
  EXPECT_EQ(refusal(ok), "");
}

TEST(ProfileOptionsValidation, TheEnergyCounterIsReadAtACadenceThatExists) {
  auto fast = with_command();
  fast.energy_counter_ms = 50;  // faster than the 100 ms samples, and no power cadence
  EXPECT_NE(refusal(fast).find("faster than any sampling cadence"), std::string::npos);
  auto power = with_command();
  power.energy_counter_ms = 50;
  power.power_sampling_ms = 10;  // the power cadence can read it every 50 ms
  EXPECT_EQ(refusal(power), "");
  auto slow = with_command();
  slow.energy_counter_ms = 1000;
  EXPECT_EQ(refusal(slow), "");
}

TEST(ProfileOptionsValidation, TimesMustNotBeNegative) {
  auto runtime = with_command();
  runtime.max_runtime_s = -1;
  EXPECT_NE(refusal(runtime).find("--max-runtime"), std::string::npos);
  auto grace = with_command();
  grace.kill_grace_s = -0.5;
  EXPECT_NE(refusal(grace).find("--kill-grace"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::app
