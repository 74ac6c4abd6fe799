// Energy from the hardware counter and from integrating power, and time spent throttled.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace gpuscope::analyze {

struct CounterEnergy {
  double joules = 0;
  std::size_t resets = 0;  // times the counter went backwards (driver reload): segments summed
  double covered_s = 0;    // time between the first and last valid reading
};

// Energy from a cumulative counter in mJ sampled at `t_s` (seconds, increasing): the sum of its
// increases. Gaps between readings need no care (the counter kept counting); NaN readings are
// skipped. When the counter goes backwards (a reset), the interval holding the reset is left
// out: the energy before the reset within it is unknown. Spans are paired up to the shorter.
// nullopt with fewer than two valid readings.
std::optional<CounterEnergy> counter_energy(std::span<const double> t_s,
                                            std::span<const double> counter_mj);

// The counter's energy in each interval [edges[i], edges[i+1]) (seconds, increasing), in J: the
// cumulative energy (the counter's increases, a reset's interval left out as counter_energy
// does) interpolated linearly at each edge between the readings around it, so an interval edge
// between two readings splits their energy in proportion to time. Edges before the first or
// after the last valid reading are clamped to it: energy outside the readings is unknown, never
// extrapolated. The values sum to counter_energy's joules when the edges cover the readings.
// edges.size() - 1 values; none with fewer than two edges; zeros with fewer than two readings.
std::vector<double> counter_energy_in(std::span<const double> t_s,
                                      std::span<const double> counter_mj,
                                      std::span<const double> edges_s);

// Trapezoid integral of power (W) over time (s), in J, between consecutive valid readings.
// Pairs further apart than `max_gap_s` (a sampling gap or a lost GPU) are not bridged; pass
// infinity to bridge every gap. NaN readings are skipped (their neighbours are paired, subject
// to the gap limit). Spans are paired up to the shorter; no valid pair gives 0.
double integrate_power(std::span<const double> t_s, std::span<const double> power_w,
                       double max_gap_s);

// Throttle reasons gpuscope reports on, in the order of kThrottleReasonNames.
inline constexpr std::size_t kThrottleReasonCount = 6;
inline constexpr std::array<std::string_view, kThrottleReasonCount> kThrottleReasonNames = {
    "power cap", "thermal", "power brake", "HW slowdown", "sync boost", "application clocks"};

struct ThrottleTime {
  std::array<double, kThrottleReasonCount> seconds{};  // per reason (overlaps counted per reason)
  double any_s = 0;                                    // time with at least one of them
  double observed_s = 0;                               // time covered by readings
};

// Time with each clock-event reason set, from bitmask readings at `t_s` (each reading holds
// until the next time stamp when that is at most `max_gap_s` later; the last one is not
// extended). A NaN reading leaves its interval unobserved. "GPU idle" is not a throttle and is
// ignored, as are bits gpuscope does not report; "thermal" is software or hardware thermal
// slowdown. "HW slowdown" is NVML's umbrella for hardware slowdowns and may be set along with
// HW thermal or power brake: reasons overlap, so `seconds` may sum to more than `any_s`.
ThrottleTime throttle_time(std::span<const double> t_s, std::span<const double> reasons,
                           double max_gap_s);

}  // namespace gpuscope::analyze
