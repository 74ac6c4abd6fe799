// What an analysis takes of each run besides its samples and phases: the GPUs lost, MIG changes
// and health events and counters, the processes on the GPUs and the node's energy. Read while
// the run's file is open anyway: by the worker that reads the run's first GPU in pass 2
// (feed_devices), else when the analysis finishes. Reopening 4,096 rank files only for these
// took 2.6 s (SQLite parses each file's schema again).
#pragma once

#include <optional>
#include <vector>

#include "analyze/analyzer.hpp"
#include "analyze/node_energy.hpp"
#include "analyze/processes.hpp"
#include "core/health.hpp"
#include "load/sources.hpp"
#include "store/run_reader.hpp"

namespace gpuscope::load {

struct RunExtras {
  std::vector<store::RunEvent> events;                  // GPUs lost, MIG changes, health events
  std::vector<std::pair<HealthRow, HealthRow>> health;  // each GPU's first and last sample
  std::vector<analyze::ProcessUse> processes;           // summarised on the analysis' time axis
  analyze::NodeEnergyInput node;                        // this run's domains, CPU times and phases
};

// Each source's extras (by Source::index) as pass 2 read them; nullopt where it did not.
using SourceExtras = std::vector<std::optional<RunExtras>>;

// Reads `source`'s extras from `reader` (an open connection to its file).
RunExtras read_extras(const store::RunReader& reader, const AnalysisSources& in,
                      const Source& source);

// Feeds the events and health counters to `analyzer` as findings, and adds the processes and
// the node's energy to what the analysis gathers of all runs.
void feed_extras(analyze::Analyzer& analyzer, const AnalysisSources& in, const Source& source,
                 RunExtras&& extras, std::vector<analyze::ProcessUse>& processes,
                 analyze::NodeEnergyInput& node);

}  // namespace gpuscope::load
