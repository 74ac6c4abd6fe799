// The power model: pure functions from activity and a power cap to demanded power, clock speed
// and work rate. docs/scenarios.md ("Physics") explains the formulas.
#pragma once

#include <optional>

#include "sim/gpu_spec.hpp"
#include "sim/levels.hpp"

namespace gpuscope::sim {

// Dynamic power grows as f^k with the clock f (voltage scales with frequency on DVFS curves);
// k = 2.5 is between the f^2 of a fixed voltage and the f^3 of ideal voltage scaling.
inline constexpr double kPowerExponent = 2.5;

// The slowest clock a cap can force, as a fraction of the maximum.
inline constexpr double kMinSpeed = 0.05;

// How hard the levels (percent) drive the GPU's power, 0..1: SM and tensor activity dominate,
// memory traffic and the FP pipes add to it.
double activity_index(const Levels& levels);

// Power the GPU draws at full clock for these (already activity-scaled) levels. phase_power_w,
// when the phase gives one, replaces the activity-derived figure, scaled by activity_scale.
double demanded_power_w(const PowerSpec& power, const Levels& levels,
                        std::optional<double> phase_power_w, double activity_scale);

// The clock fraction s in [kMinSpeed, 1] at which power fits under cap_w:
// idle + (demand - idle) * s^k = cap.
double cap_speed(double cap_w, double demand_w, double idle_w);

// Power drawn at clock fraction speed.
double power_at_speed(double demand_w, double idle_w, double speed);

// Work-seconds done per second at clock fraction speed: a compute-bound phase slows in
// proportion, a memory- or communication-bound one barely.
double work_rate(double compute_bound, double speed);

}  // namespace gpuscope::sim
