// The per-GPU grids the HTML report embeds (docs/report.md, "The embedded data"), bounded in
// size whatever the GPU count: each GPU's series on coarser time bins when GPUs × bins would pass
// a cell budget, and, past a row budget, the heatmap's rows as groups of consecutive GPUs at the
// analysis' full time resolution.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>

#include "analyze/analysis.hpp"

namespace gpuscope::report {

struct GridLimits {
  std::size_t max_rows = 1024;         // heatmap rows; more GPUs are drawn in groups
  std::size_t max_cells = 1024 * 300;  // per metric, GPUs × bins of the per-GPU series
};

// `{bin_s, bins, metrics: {name: {lo, hi, gpus_with_data, bytes}}}`, plus `rows` (`gpus_per_row`,
// `count`, `bin_s`, `bins`, `metrics: {name: {lo, hi, bytes}}`) when there are more GPUs than
// limits.max_rows; an empty object when the analysis kept no grid.
nlohmann::json gpu_grid_json(const analyze::Analysis& a, const GridLimits& limits);

}  // namespace gpuscope::report
