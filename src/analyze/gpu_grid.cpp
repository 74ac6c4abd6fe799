#include "analyze/gpu_grid.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace gpuscope::analyze {

double gpu_grid_bin_width(double span_s, double base_bin_s, std::size_t max_bins) {
  const double base = base_bin_s > 0 ? base_bin_s : 0.1;
  if (max_bins == 0 || span_s <= 0) return base;
  const double steps = std::ceil(span_s / static_cast<double>(max_bins) / base);
  return std::max(1.0, steps) * base;
}

std::vector<float> gpu_grid_means(std::span<const double> t_s, std::span<const double> values,
                                  double bin_s, std::size_t bins) {
  std::vector<double> sum(bins, 0.0);
  std::vector<std::uint32_t> count(bins, 0);
  for (std::size_t i = 0; i < t_s.size() && i < values.size(); ++i) {
    if (std::isnan(values[i]) || t_s[i] < 0) continue;
    const auto bin = static_cast<std::size_t>(t_s[i] / bin_s);
    if (bin >= bins) continue;
    sum[bin] += values[i];
    ++count[bin];
  }
  std::vector<float> out(bins, std::numeric_limits<float>::quiet_NaN());
  for (std::size_t b = 0; b < bins; ++b) {
    if (count[b] > 0) out[b] = static_cast<float>(sum[b] / count[b]);
  }
  return out;
}

}  // namespace gpuscope::analyze
