#include "analyze/energy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/clock_events.hpp"

namespace gpuscope::analyze {

namespace {

// Bits of each reported reason, in the order of kThrottleReasonNames (core/clock_events.hpp).
constexpr std::array<std::uint64_t, kThrottleReasonCount> kReasonBits = {
    kClockEventSwPowerCap,
    kClockEventSwThermalSlowdown | kClockEventHwThermalSlowdown,
    kClockEventHwPowerBrakeSlowdown,
    kClockEventHwSlowdown,
    kClockEventSyncBoost,
    kClockEventApplicationsClocksSetting,
};
constexpr std::uint64_t kAnyReason = kClockEventThrottles;

// The bitmask a stored reading stands for; nullopt for NaN or anything not a mask.
std::optional<std::uint64_t> as_mask(double value) {
  if (!(value >= 0 && value < 9007199254740992.0)) return std::nullopt;  // [0, 2^53)
  return static_cast<std::uint64_t>(value);
}

}  // namespace

std::optional<CounterEnergy> counter_energy(std::span<const double> t_s,
                                            std::span<const double> counter_mj) {
  const std::size_t n = std::min(t_s.size(), counter_mj.size());
  CounterEnergy energy;
  double energy_mj = 0;
  std::size_t readings = 0;
  double first_t = 0, last_t = 0, last_counter = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(t_s[i]) || std::isnan(counter_mj[i])) continue;
    if (readings == 0) {
      first_t = t_s[i];
    } else if (counter_mj[i] >= last_counter) {
      energy_mj += counter_mj[i] - last_counter;
    } else {
      // The counter restarted (driver reload): what it held before is lost, and the interval
      // with the restart in it is left out, since when in it the restart came is unknown.
      ++energy.resets;
    }
    last_t = t_s[i];
    last_counter = counter_mj[i];
    ++readings;
  }
  if (readings < 2) return std::nullopt;
  energy.joules = energy_mj / 1000;
  energy.covered_s = last_t - first_t;
  return energy;
}

std::vector<double> counter_energy_in(std::span<const double> t_s,
                                      std::span<const double> counter_mj,
                                      std::span<const double> edges_s) {
  if (edges_s.size() < 2) return {};
  // The cumulative energy (mJ) at each valid reading.
  std::vector<double> times, cumulative;
  const std::size_t n = std::min(t_s.size(), counter_mj.size());
  double last_counter = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(t_s[i]) || std::isnan(counter_mj[i])) continue;
    if (!times.empty() && t_s[i] < times.back()) continue;  // out of order: not a reading to trust
    const double before = cumulative.empty() ? 0 : cumulative.back();
    const bool increase = !cumulative.empty() && counter_mj[i] >= last_counter;
    times.push_back(t_s[i]);
    cumulative.push_back(increase ? before + (counter_mj[i] - last_counter) : before);
    last_counter = counter_mj[i];
  }
  std::vector<double> out(edges_s.size() - 1, 0.0);
  if (times.size() < 2) return out;
  // The cumulative energy at time x, interpolated; clamped outside the readings.
  std::size_t k = 0;  // edges are increasing: the search only moves forward
  auto at = [&](double x) {
    if (!(x > times.front())) return cumulative.front();
    if (!(x < times.back())) return cumulative.back();
    while (k + 1 < times.size() && times[k + 1] <= x) ++k;
    const double span = times[k + 1] - times[k];
    const double share = span > 0 ? (x - times[k]) / span : 1.0;
    return cumulative[k] + share * (cumulative[k + 1] - cumulative[k]);
  };
  double previous = at(edges_s[0]);
  for (std::size_t i = 0; i + 1 < edges_s.size(); ++i) {
    const double next = at(edges_s[i + 1]);
    out[i] = std::max(0.0, next - previous) / 1000;
    previous = next;
  }
  return out;
}

double integrate_power(std::span<const double> t_s, std::span<const double> power_w,
                       double max_gap_s) {
  const std::size_t n = std::min(t_s.size(), power_w.size());
  double joules = 0;
  bool have_previous = false;
  double previous_t = 0, previous_w = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(t_s[i]) || std::isnan(power_w[i])) continue;
    if (have_previous) {
      const double dt = t_s[i] - previous_t;
      if (dt > 0 && !(dt > max_gap_s)) joules += dt * (previous_w + power_w[i]) / 2;
    }
    have_previous = true;
    previous_t = t_s[i];
    previous_w = power_w[i];
  }
  return joules;
}

ThrottleTime throttle_time(std::span<const double> t_s, std::span<const double> reasons,
                           double max_gap_s) {
  const std::size_t n = std::min(t_s.size(), reasons.size());
  ThrottleTime time;
  std::size_t previous = n;  // index of the previous reading with a valid time
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(t_s[i])) continue;
    if (previous < n) {
      const double dt = t_s[i] - t_s[previous];
      const std::optional<std::uint64_t> mask = as_mask(reasons[previous]);
      if (mask && dt > 0 && !(dt > max_gap_s)) {
        time.observed_s += dt;
        for (std::size_t r = 0; r < kThrottleReasonCount; ++r) {
          if ((*mask & kReasonBits[r]) != 0) time.seconds[r] += dt;
        }
        if ((*mask & kAnyReason) != 0) time.any_s += dt;
      }
    }
    previous = i;
  }
  return time;
}

}  // namespace gpuscope::analyze
