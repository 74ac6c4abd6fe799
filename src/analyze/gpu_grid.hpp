// Per-GPU series on a coarse common grid: what the HTML report draws per GPU and in its heatmap,
// small enough for a thousand GPUs (a few hundred floats each).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace gpuscope::analyze {

// The grid width for a run of `span_s` seconds: a multiple of `base_bin_s` giving at most
// `max_bins` bins (at least one bin of base_bin_s).
double gpu_grid_bin_width(double span_s, double base_bin_s, std::size_t max_bins);

// The mean of `values` (at times `t_s`, seconds from 0) in each of `bins` bins of `bin_s`;
// NaN values and times outside the grid are skipped, bins without a value are NaN.
std::vector<float> gpu_grid_means(std::span<const double> t_s, std::span<const double> values,
                                  double bin_s, std::size_t bins);

}  // namespace gpuscope::analyze
