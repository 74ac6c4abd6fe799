// The two passes that feed the Analyzer from run databases (docs/analysis.md): pass 1 reads two
// columns of every GPU for its activity, pass 2 every metric of every GPU; both read GPU by GPU
// on worker threads where the devices table lists every GPU with samples (DeviceJob), else with
// one cursor over each run on this thread. Phases and events are read once, beside them.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "analyze/analyzer.hpp"
#include "load/sources.hpp"

namespace gpuscope::load {

// Pass 1: every GPU's activity (Analyzer::add_activity); returns what it found of each source's
// timestamps (by Source::index), for report_time_checks. `jobs` as device_jobs() gives them.
std::vector<TimeCheck> feed_activity(analyze::Analyzer& analyzer, const AnalysisSources& in,
                                     const std::optional<std::vector<DeviceJob>>& jobs);

// The clock steps and misplaced timestamps pass 1 found, as data problems (before
// Analyzer::finish_activity, as one analysis notes them).
void report_time_checks(analyze::Analyzer& analyzer, const std::vector<Source>& sources,
                        const std::vector<analyze::RunMeta>& metas,
                        const std::vector<TimeCheck>& checks);

// Pass 2 (after Analyzer::finish_activity): every GPU's every metric and power samples, with the
// derived metrics, analysed on the worker threads and handed to `sink` in GPU order
// (Analyzer::add_prepared, or a distributed task's part).
void feed_devices(const analyze::Analyzer& analyzer, const AnalysisSources& in,
                  const std::optional<std::vector<DeviceJob>>& jobs,
                  const std::function<void(analyze::PreparedDevice&&)>& sink);

// The runs' phases (schema 1.5) on the analysis' time axis.
void feed_phases(analyze::Analyzer& analyzer, const std::vector<Source>& sources);

// One run's GPUs lost, MIG changes and health events and counters, as findings (read while its
// file is open for the other extras: app/analysis_loader).
void feed_events(analyze::Analyzer& analyzer, const AnalysisSources& in, const Source& source);

}  // namespace gpuscope::load
