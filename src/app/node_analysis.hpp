// The node's energy in an analysis (docs/node-energy.md): each run's node energy domains, their
// readings and CPU times read from its database and put on the analysis' time axis, then
// analyze::node_energy over the analysis' window, beside the GPUs' energy and carbon.
#pragma once

#include "analyze/analysis.hpp"
#include "analyze/analyzer.hpp"
#include "app/analysis_sources.hpp"

namespace gpuscope::app {

// Sets analysis.node_energy (left empty when no run recorded a node energy domain) and adds its
// notes to the analysis'.
void add_node_energy(analyze::Analysis& analysis, const AnalysisSources& in,
                     const analyze::AnalysisOptions& options);

}  // namespace gpuscope::app
