// GPM metrics: interval averages between two samples, as nvmlGpmMetricsGet computes them.
#pragma once

#include "nvml/abi.hpp"
#include "sim/handles.hpp"

namespace gpuscope::sim {

// Fills metric.value, nvmlReturn and metricInfo for metric.metricId from two samples of one
// device, second taken after first. Ids the sim does not model get NOT_SUPPORTED.
void compute_gpm_metric(const nvmlGpmSample_st& first, const nvmlGpmSample_st& second,
                        nvmlGpmMetric_t& metric);

}  // namespace gpuscope::sim
