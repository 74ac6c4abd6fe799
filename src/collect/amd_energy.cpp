#include "collect/amd_energy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace gpuscope::collect {
namespace {

constexpr double kDefaultMaxPowerW = 1500;  // above any Instinct GPU's cap (MI300X: 750 W)
constexpr std::uint64_t kWrap32 = std::uint64_t{1} << 32U;

}  // namespace

AmdEnergyCounter::AmdEnergyCounter(std::optional<double> max_power_w)
    : max_power_w_(max_power_w && *max_power_w > 0 ? *max_power_w : kDefaultMaxPowerW) {}

double AmdEnergyCounter::bound_uj(std::int64_t ns) const {
  // Twice the maximum power, plus a joule, so that clock jitter and a driver's late time stamp
  // never turn a real wrap into a restart.
  const double seconds = static_cast<double>(std::max<std::int64_t>(ns, 0)) / 1e9;
  return 2 * max_power_w_ * seconds * 1e6 + 1e6;
}

AmdEnergyCounter::Reading AmdEnergyCounter::add(std::uint64_t count, double resolution_uj,
                                                std::uint64_t timestamp_ns, std::int64_t mono_ns) {
  Reading reading;
  if (!last_count_) {
    // The first reading: the counter starts at the accumulator's value, as NVML's counts from
    // the driver's load; only differences are ever used.
    total_uj_ = static_cast<double>(count) * resolution_uj;
  } else if (count >= *last_count_) {
    total_uj_ += static_cast<double>(count - *last_count_) * resolution_uj;
  } else {
    std::int64_t elapsed_ns = mono_ns - last_mono_ns_;
    if (timestamp_ns > last_timestamp_ns_ && last_timestamp_ns_ != 0) {
      elapsed_ns = std::max(elapsed_ns, static_cast<std::int64_t>(std::min<std::uint64_t>(
                                            timestamp_ns - last_timestamp_ns_, INT64_MAX)));
    }
    const double elapsed_bound = bound_uj(elapsed_ns);
    const double wrapped = *last_count_ < kWrap32
                               ? static_cast<double>(kWrap32 - *last_count_ + count) * resolution_uj
                               : HUGE_VAL;
    if (wrapped <= elapsed_bound) {
      total_uj_ += wrapped;  // a 32-bit accumulator wrapped
    } else {
      const double since_restart = static_cast<double>(count) * resolution_uj;
      const bool counted = since_restart <= elapsed_bound;
      if (counted) total_uj_ += since_restart;
      reading.event = fmt::format(
          "the energy accumulator went back from {} to {} (a GPU reset or a driver reload); "
          "the energy counter continues from where it was{}",
          *last_count_, count,
          counted ? ", with the energy counted since the restart"
                  : "; the energy between the two readings is not counted");
    }
  }
  last_count_ = count;
  last_mono_ns_ = mono_ns;
  last_timestamp_ns_ = timestamp_ns;
  reading.energy_mj = std::llround(total_uj_ / 1000.0);
  return reading;
}

}  // namespace gpuscope::collect
