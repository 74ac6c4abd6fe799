// NVML's clock-event reason bits (nvmlClocksEventReason*, formerly nvmlClocksThrottleReason*),
// defined once with their names: the long words of events and messages, the short words of the
// monitor table (in its own order, most telling first), and which reasons analyze counts as a
// throttle. nvml/abi.hpp checks every bit against the ABI with static_assert.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpuscope {

struct ClockEventReason {
  std::uint64_t bit;
  std::string_view words;        // "SW power cap" (events, messages)
  std::string_view short_words;  // "power cap" (the monitor's column); empty: not listed there
  int short_order;               // position in the monitor's column
};

inline constexpr std::uint64_t kClockEventGpuIdle = 0x1;
inline constexpr std::uint64_t kClockEventApplicationsClocksSetting = 0x2;
inline constexpr std::uint64_t kClockEventSwPowerCap = 0x4;
inline constexpr std::uint64_t kClockEventHwSlowdown = 0x8;
inline constexpr std::uint64_t kClockEventSyncBoost = 0x10;
inline constexpr std::uint64_t kClockEventSwThermalSlowdown = 0x20;
inline constexpr std::uint64_t kClockEventHwThermalSlowdown = 0x40;
inline constexpr std::uint64_t kClockEventHwPowerBrakeSlowdown = 0x80;
inline constexpr std::uint64_t kClockEventDisplayClockSetting = 0x100;

// In bit order.
inline constexpr std::array<ClockEventReason, 9> kClockEventReasons = {{
    {kClockEventGpuIdle, "GPU idle", "", 0},
    {kClockEventApplicationsClocksSetting, "application clocks setting", "app clocks", 7},
    {kClockEventSwPowerCap, "SW power cap", "power cap", 1},
    {kClockEventHwSlowdown, "HW slowdown", "HW slowdown", 5},
    {kClockEventSyncBoost, "sync boost", "sync boost", 6},
    {kClockEventSwThermalSlowdown, "SW thermal slowdown", "thermal", 3},
    {kClockEventHwThermalSlowdown, "HW thermal slowdown", "HW thermal", 4},
    {kClockEventHwPowerBrakeSlowdown, "HW power brake", "power brake", 2},
    {kClockEventDisplayClockSetting, "display clock setting", "display", 8},
}};

// Every reason that holds clocks down (GPU idle and the display clock are not throttles).
inline constexpr std::uint64_t kClockEventThrottles =
    kClockEventSwPowerCap | kClockEventSwThermalSlowdown | kClockEventHwThermalSlowdown |
    kClockEventHwPowerBrakeSlowdown | kClockEventHwSlowdown | kClockEventSyncBoost |
    kClockEventApplicationsClocksSetting;
static_assert((kClockEventThrottles & kClockEventGpuIdle) == 0, "GPU idle is not a throttle");

// "SW power cap, HW thermal slowdown"; "none" for no bit.
inline std::string describe_clock_event_reasons(std::uint64_t reasons) {
  std::string text;
  for (const auto& reason : kClockEventReasons) {
    if ((reasons & reason.bit) == 0) continue;
    if (!text.empty()) text += ", ";
    text += reason.words;
  }
  return text.empty() ? "none" : text;
}

// "power cap,thermal" in the monitor's order; "idle" when only the idle bit is set; "-" for none.
inline std::string short_clock_event_reasons(std::uint64_t reasons) {
  std::string text;
  for (int order = 1; order <= static_cast<int>(kClockEventReasons.size()); ++order) {
    for (const auto& reason : kClockEventReasons) {
      if (reason.short_order != order || (reasons & reason.bit) == 0) continue;
      if (!text.empty()) text += ",";
      text += reason.short_words;
    }
  }
  if (text.empty()) return (reasons & kClockEventGpuIdle) != 0 ? "idle" : "-";
  return text;
}

}  // namespace gpuscope
