// Where a GPU is in its phase list, by work done (work-seconds at full speed).
#pragma once

#include <cstddef>
#include <vector>

#include "sim/scenario.hpp"

namespace gpuscope::sim {

class Timeline {
 public:
  explicit Timeline(const std::vector<Phase>& phases);

  std::size_t size() const { return ends_.size(); }
  // Work at which phase p starts and ends; the last phase never ends (the GPU stays in it).
  double start_of(std::size_t p) const { return p == 0 ? 0.0 : ends_[p - 1]; }
  double end_of(std::size_t p) const;
  // The phase that work falls in.
  std::size_t phase_at(double work) const;
  // How far phase p's ramp has progressed at work: 0 = previous phase's levels, 1 = its own.
  double ramp_fraction(std::size_t p, double work) const;
  // Total work of every phase but the last (the scenario's nominal length).
  double nominal_work() const { return ends_.size() < 2 ? 0.0 : ends_[ends_.size() - 2]; }

 private:
  std::vector<double> ends_;
  std::vector<double> ramps_;
};

}  // namespace gpuscope::sim
