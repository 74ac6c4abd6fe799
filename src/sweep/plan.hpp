// The plan of a sweep: which settings to try, parsed from the command line and checked against
// what the GPUs accept, and the order the trials run in.
#pragma once

#include <string_view>
#include <vector>

#include "core/sweep.hpp"

namespace gpuscope::sweep {

// "200:700:50" (start:stop:step, stop included when the steps reach it) or "300,400,500" → the
// values, sorted and without duplicates. Throws Error::usage naming what is wrong (`option` is
// the option's name for messages, e.g. "--power-limits").
std::vector<double> parse_settings(std::string_view text, std::string_view option);

// Throws Error::usage when a value lies outside [min, max] (unit "W" or "MHz"), naming it, the
// range and what to do.
void check_range(const std::vector<double>& values, double min, double max, std::string_view unit,
                 std::string_view what);

// The plan: the values from the highest to the lowest (as Zeus sweeps), the baseline added
// when missing and marked.
std::vector<Setting> make_plan(const std::vector<double>& values, double baseline);

// The trials in the order they run: all settings of repeat 1, then all of repeat 2, ..., so
// that a slow drift (temperature, other tenants) spreads over every setting instead of biasing
// one.
std::vector<Trial> plan_trials(const std::vector<Setting>& plan, int repeats);

}  // namespace gpuscope::sweep
