// The two passes that feed the Analyzer from run databases (docs/analysis.md): pass 1 reads two
// columns of every GPU for its activity, pass 2 every metric of every GPU; both read GPU by GPU
// on worker threads where the devices table lists every GPU with samples (DeviceJob), else with
// one cursor over each run on this thread. Phases and events are read once, beside them.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "analyze/analyzer.hpp"
#include "core/phase.hpp"
#include "load/run_extras.hpp"
#include "load/sources.hpp"

namespace gpuscope::load {

// Each source's phases (by Source::index) as pass 1 read them while the source's file was open
// for its first GPU; nullopt where it did not (feed_phases then opens the file again). Opening a
// file costs about 0.3 ms (SQLite parses its schema): 4,096 rank files reopened took 2 s.
using SourcePhases = std::vector<std::optional<std::vector<Phase>>>;

// Pass 1: every GPU's activity (Analyzer::add_activity); returns what it found of each source's
// timestamps (by Source::index), for report_time_checks. `jobs` as device_jobs() gives them.
// With `phases`, each source's phases too.
std::vector<TimeCheck> feed_activity(analyze::Analyzer& analyzer, const AnalysisSources& in,
                                     const std::optional<std::vector<DeviceJob>>& jobs,
                                     SourcePhases* phases = nullptr);

// The clock steps and misplaced timestamps pass 1 found, as data problems (before
// Analyzer::finish_activity, as one analysis notes them).
void report_time_checks(analyze::Analyzer& analyzer, const std::vector<Source>& sources,
                        const std::vector<analyze::RunMeta>& metas,
                        const std::vector<TimeCheck>& checks);

// Pass 2 (after Analyzer::finish_activity): every GPU's every metric and power samples, with the
// derived metrics, analysed on the worker threads and handed to `sink` in GPU order
// (Analyzer::add_prepared, or a distributed task's part).
// With `extras`, each run's extras too, read by the worker of its first GPU (run_extras.hpp).
void feed_devices(const analyze::Analyzer& analyzer, const AnalysisSources& in,
                  const std::optional<std::vector<DeviceJob>>& jobs,
                  const std::function<void(analyze::PreparedDevice&&)>& sink,
                  SourceExtras* extras = nullptr);

// The runs' phases (schema 1.5) on the analysis' time axis; those pass 1 read are taken from
// `read` (moved out), the others read here.
void feed_phases(analyze::Analyzer& analyzer, const std::vector<Source>& sources,
                 SourcePhases* read = nullptr);

}  // namespace gpuscope::load
