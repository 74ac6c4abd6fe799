#include "analyze/score.hpp"

#include <algorithm>
#include <cmath>

namespace gpuscope::analyze {

namespace {

double logistic(double x) {
  return 1 / (1 + std::exp(-x));
}

}  // namespace

std::optional<double> efficiency_score(double sm_active, double flop_active, double occupancy,
                                       const ScoreParameters& parameters) {
  if (!std::isfinite(sm_active) || !std::isfinite(flop_active) || !std::isfinite(occupancy)) {
    return std::nullopt;
  }
  // Counters read a hair below zero now and then; a negative ratio is meaningless and would
  // make the score negative, so it counts as 0. Above 1 is left alone: F sums four pipes.
  const double a = std::max(sm_active, 0.0);
  const double f = std::max(flop_active, 0.0);
  const double o = std::max(occupancy, 0.0);
  const double activity = logistic(parameters.alpha * a) - 0.5;
  const double work =
      logistic(parameters.beta * f + parameters.gamma * o * std::exp(-parameters.lambda * f)) - 0.5;
  return 4 * activity * work;
}

}  // namespace gpuscope::analyze
