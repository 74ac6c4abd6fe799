#include "report/gpu_grid.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "report/html_data.hpp"

namespace gpuscope::report {
namespace {

using nlohmann::json;

constexpr std::uint8_t kMissingByte = 255;  // a quantised value with no sample
constexpr double kLevels = 254;             // quantised values are 0..254
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Rows × bins of values, row-major; NaN is "no sample".
struct Matrix {
  std::size_t rows = 0;
  std::size_t bins = 0;
  std::vector<float> values;
  std::span<const float> row(std::size_t r) const { return {values.data() + r * bins, bins}; }
};

// The mean of the values that are not NaN, NaN when all are.
struct Mean {
  double sum = 0;
  std::size_t n = 0;
  void add(float v) {
    if (std::isnan(v)) return;
    sum += static_cast<double>(v);
    ++n;
  }
  float value() const { return n ? static_cast<float>(sum / static_cast<double>(n)) : kNaN; }
};

// One metric of every GPU, each GPU's bins averaged `factor` at a time.
Matrix per_gpu(const analyze::Analysis& a, std::size_t slot, std::size_t factor) {
  Matrix m{a.gpus.size(), (a.gpu_grid_bins + factor - 1) / factor, {}};
  m.values.assign(m.rows * m.bins, kNaN);
  for (std::size_t g = 0; g < a.gpus.size(); ++g) {
    if (slot >= a.gpus[g].grid.size()) continue;
    const auto& mean = a.gpus[g].grid[slot].mean;
    const std::size_t bins = std::min(mean.size(), a.gpu_grid_bins);
    for (std::size_t b = 0; b < m.bins; ++b) {
      Mean acc;
      for (std::size_t k = b * factor; k < std::min(bins, (b + 1) * factor); ++k) acc.add(mean[k]);
      m.values[g * m.bins + b] = acc.value();
    }
  }
  return m;
}

// Groups of `size` consecutive GPUs (rows of `gpus`), each bin the mean of the group's values.
Matrix grouped(const Matrix& gpus, std::size_t size) {
  Matrix m{(gpus.rows + size - 1) / size, gpus.bins, {}};
  m.values.assign(m.rows * m.bins, kNaN);
  std::vector<Mean> acc(m.bins);
  for (std::size_t r = 0; r < m.rows; ++r) {
    std::fill(acc.begin(), acc.end(), Mean{});
    for (std::size_t g = r * size; g < std::min(gpus.rows, (r + 1) * size); ++g) {
      const auto row = gpus.row(g);
      for (std::size_t b = 0; b < m.bins; ++b) acc[b].add(row[b]);
    }
    for (std::size_t b = 0; b < m.bins; ++b) m.values[r * m.bins + b] = acc[b].value();
  }
  return m;
}

// Row-major bytes: 0..254 span [lo, hi] of all rows, 255 is missing. `with_data`: whether each
// row has a sample.
json quantised(const Matrix& m, bool with_data) {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (float v : m.values) {
    if (std::isnan(v)) continue;
    lo = std::min(lo, static_cast<double>(v));
    hi = std::max(hi, static_cast<double>(v));
  }
  std::vector<std::uint8_t> bytes(m.values.size(), kMissingByte);
  json supported = json::array();
  for (std::size_t r = 0; r < m.rows; ++r) {
    bool any = false;
    for (std::size_t b = 0; b < m.bins; ++b) {
      const float v = m.values[r * m.bins + b];
      if (std::isnan(v)) continue;
      any = true;
      const double x = hi > lo ? (static_cast<double>(v) - lo) / (hi - lo) : 0.0;
      bytes[r * m.bins + b] = static_cast<std::uint8_t>(std::lround(x * kLevels));
    }
    supported.push_back(any);
  }
  const bool empty = !std::isfinite(lo);
  json out = {{"lo", empty ? json(nullptr) : json(lo)},
              {"hi", empty ? json(nullptr) : json(hi)},
              {"bytes", base64(bytes)}};
  if (with_data) out["gpus_with_data"] = std::move(supported);
  return out;
}

}  // namespace

json gpu_grid_json(const analyze::Analysis& a, const GridLimits& limits) {
  if (a.gpus.empty() || a.gpu_grid_bins == 0) return json::object();
  const std::size_t n = a.gpus.size();
  const std::size_t max_cells = std::max<std::size_t>(limits.max_cells, 1);
  // Each GPU's series keeps ≥ 1 bin; the bins grow by a whole factor so they stay aligned.
  const std::size_t factor =
      std::max<std::size_t>(1, (n * a.gpu_grid_bins + max_cells - 1) / max_cells);
  const std::size_t group =
      n > limits.max_rows && limits.max_rows > 0 ? (n + limits.max_rows - 1) / limits.max_rows : 1;
  json metrics = json::object();
  json row_metrics = json::object();
  for (std::size_t slot = 0; slot < a.gpus.front().grid.size(); ++slot) {
    const std::string name(info(a.gpus.front().grid[slot].metric).name);
    metrics[name] = quantised(per_gpu(a, slot, factor), true);
    if (group > 1) row_metrics[name] = quantised(grouped(per_gpu(a, slot, 1), group), false);
  }
  json out = {{"bin_s", a.gpu_grid_bin_s * static_cast<double>(factor)},
              {"bins", (a.gpu_grid_bins + factor - 1) / factor},
              {"metrics", metrics}};
  if (group > 1) {
    out["rows"] = {{"gpus_per_row", group},
                   {"count", (n + group - 1) / group},
                   {"bin_s", a.gpu_grid_bin_s},
                   {"bins", a.gpu_grid_bins},
                   {"metrics", row_metrics}};
  }
  return out;
}

}  // namespace gpuscope::report
