#include "sim/timeline.hpp"

#include <algorithm>
#include <limits>

namespace gpuscope::sim {

Timeline::Timeline(const std::vector<Phase>& phases) {
  double end = 0;
  for (const Phase& phase : phases) {
    end += phase.duration_s;
    ends_.push_back(end);
    ramps_.push_back(phase.ramp_s);
  }
}

double Timeline::end_of(std::size_t p) const {
  return p + 1 >= ends_.size() ? std::numeric_limits<double>::infinity() : ends_[p];
}

std::size_t Timeline::phase_at(double work) const {
  const auto it = std::upper_bound(ends_.begin(), ends_.end(), work);
  const auto index = static_cast<std::size_t>(it - ends_.begin());
  return std::min(index, ends_.size() - 1);
}

double Timeline::ramp_fraction(std::size_t p, double work) const {
  if (p == 0 || ramps_[p] <= 0) return 1.0;
  return std::clamp((work - start_of(p)) / ramps_[p], 0.0, 1.0);
}

}  // namespace gpuscope::sim
