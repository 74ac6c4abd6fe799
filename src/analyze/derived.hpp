// Metrics derived from the stored ones (docs/analysis.md, "FLOP activity"): computed per sample
// when a GPU's series are read, never stored.
#pragma once

#include "analyze/analyzer.hpp"

namespace gpuscope::analyze {

// FLOP activity (Metric::FlopActivePct), gssr's total_flop_activity: FP64 + FP32 + FP16 +
// tensor pipe activity, in percent of one pipe's time (so up to 400 %). A sample lacking any of
// the four has none (NaN), never a partial sum. Fills series.values[FlopActivePct]; leaves it
// empty when a GPU never recorded one of the four (as a metric the GPU lacks is read).
void derive_metrics(DeviceSeries& series);

}  // namespace gpuscope::analyze
