// The two passes that feed the Analyzer from run databases (docs/analysis.md): pass 1 reads two
// columns of every GPU for its activity, pass 2 every metric of every GPU; both read GPU by GPU
// on worker threads where the devices table lists every GPU with samples (DeviceJob), else with
// one cursor over each run on this thread. Phases and events are read once, beside them.
#pragma once

#include <optional>
#include <vector>

#include "analyze/analyzer.hpp"
#include "app/analysis_sources.hpp"

namespace gpuscope::app {

// Pass 1: every GPU's activity (Analyzer::add_activity); then the clock steps and misplaced
// timestamps it found, as data problems. `jobs` as device_jobs() gives them.
void feed_activity(analyze::Analyzer& analyzer, const AnalysisSources& in,
                   const std::optional<std::vector<DeviceJob>>& jobs);

// Pass 2 (after Analyzer::finish_activity): every GPU's every metric and power samples, with the
// derived metrics, analysed on the worker threads and added in GPU order.
void feed_devices(analyze::Analyzer& analyzer, const AnalysisSources& in,
                  const std::optional<std::vector<DeviceJob>>& jobs);

// The runs' phases (schema 1.5) on the analysis' time axis.
void feed_phases(analyze::Analyzer& analyzer, const std::vector<Source>& sources);

// The GPUs lost during the runs (events), as findings.
void feed_events(analyze::Analyzer& analyzer, const AnalysisSources& in);

}  // namespace gpuscope::app
