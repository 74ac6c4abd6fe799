#include "sim/power_model.hpp"

#include <algorithm>
#include <cmath>

namespace gpuscope::sim {

double activity_index(const Levels& levels) {
  const auto at = [&](Activity metric) { return levels[index_of(metric)] / 100.0; };
  const double fp = std::max({at(Activity::Fp64), at(Activity::Fp32), at(Activity::Fp16)});
  const double index = 0.50 * at(Activity::SmActive) + 0.35 * at(Activity::Tensor) +
                       0.20 * at(Activity::Dram) + 0.10 * fp;
  return std::clamp(index, 0.0, 1.0);
}

double demanded_power_w(const PowerSpec& power, const Levels& levels,
                        std::optional<double> phase_power_w, double activity_scale) {
  if (phase_power_w) {
    const double demand = power.idle_w + (*phase_power_w - power.idle_w) * activity_scale;
    return std::clamp(demand, power.idle_w, power.max_w);
  }
  return power.idle_w + (power.max_w - power.idle_w) * activity_index(levels);
}

double cap_speed(double cap_w, double demand_w, double idle_w) {
  const double dynamic = demand_w - idle_w;
  if (demand_w <= cap_w || dynamic <= 0) return 1.0;
  const double headroom = cap_w - idle_w;
  if (headroom <= 0) return kMinSpeed;
  return std::clamp(std::pow(headroom / dynamic, 1.0 / kPowerExponent), kMinSpeed, 1.0);
}

double power_at_speed(double demand_w, double idle_w, double speed) {
  return idle_w + (demand_w - idle_w) * std::pow(speed, kPowerExponent);
}

double work_rate(double compute_bound, double speed) {
  return 1.0 - compute_bound * (1.0 - speed);
}

}  // namespace gpuscope::sim
