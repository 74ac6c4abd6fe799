// core/clock_events.hpp: the one list of clock-event reasons and its two wordings.
#include <gtest/gtest.h>

#include <set>

#include "core/clock_events.hpp"

namespace gpuscope {
namespace {

TEST(ClockEvents, EveryBitOnceAndEveryShortPositionOnce) {
  std::uint64_t seen = 0;
  std::set<int> orders;
  for (const auto& reason : kClockEventReasons) {
    EXPECT_EQ(seen & reason.bit, 0u) << reason.words;
    seen |= reason.bit;
    if (!reason.short_words.empty()) {
      EXPECT_TRUE(orders.insert(reason.short_order).second);
    }
  }
  EXPECT_EQ(seen, 0x1FFu);
  EXPECT_EQ(orders.size(), kClockEventReasons.size() - 1);  // idle has no short word
}

TEST(ClockEvents, LongWordsInBitOrderShortWordsInTheMonitorsOrder) {
  const std::uint64_t both = kClockEventSwPowerCap | kClockEventHwThermalSlowdown;
  EXPECT_EQ(describe_clock_event_reasons(both), "SW power cap, HW thermal slowdown");
  EXPECT_EQ(describe_clock_event_reasons(0), "none");
  const std::uint64_t brake = kClockEventSwThermalSlowdown | kClockEventHwPowerBrakeSlowdown;
  EXPECT_EQ(short_clock_event_reasons(brake), "power brake,thermal");
  EXPECT_EQ(short_clock_event_reasons(kClockEventGpuIdle), "idle");
  EXPECT_EQ(short_clock_event_reasons(0), "-");
  EXPECT_EQ(kClockEventThrottles & kClockEventDisplayClockSetting, 0u);
}

}  // namespace
}  // namespace gpuscope
