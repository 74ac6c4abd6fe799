// The node's energy in an analysis (docs/node-energy.md): each run's node energy domains, their
// readings and CPU times read from its database and put on the analysis' time axis, then
// analyze::node_energy over the analysis' window, beside the GPUs' energy and carbon.
#pragma once

#include "analyze/analysis.hpp"
#include "analyze/analyzer.hpp"
#include "load/sources.hpp"

namespace gpuscope::load {

// One run's node energy domains, readings and CPU times, on the analysis' axis, into `input`
// (read from `reader`, its file, open for the other extras: run_extras.hpp).
void gather_node_energy(const store::RunReader& reader, const AnalysisSources& in,
                        const Source& source, analyze::NodeEnergyInput& input);

// Sets analysis.node_energy from what was gathered (left empty when no run recorded a node
// energy domain) and adds its notes to the analysis'.
void add_node_energy(analyze::Analysis& analysis, analyze::NodeEnergyInput input,
                     const analyze::AnalysisOptions& options);

}  // namespace gpuscope::load
