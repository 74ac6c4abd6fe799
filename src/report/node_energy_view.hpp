// The node's energy in analyze's text, JSON and CSV (docs/node-energy.md): the GPUs', the CPUs'
// and the memory's energy and their total with its carbon, each domain, per phase, and the job's
// share of the node's CPU and memory energy as a labelled estimate.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "analyze/analysis.hpp"

namespace gpuscope::report {

// "Node energy (GPU, CPU, memory)" for the text views; empty without node energy.
std::string node_energy_text(const analyze::Analysis& a, bool color);
// The figures as JSON; null without node energy.
nlohmann::json node_energy_json(const analyze::Analysis& a);
// --aggregate node as CSV: scope (total, domain, phase), host, name, kind, role, joules,
// mean_power_w, carbon_g; the header alone without node energy.
std::string node_energy_csv(const analyze::Analysis& a);

}  // namespace gpuscope::report
