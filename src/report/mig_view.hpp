// MIG instances in analyze's output (docs/analysis.md, "MIG instances"): the order GPUs are listed
// in (each MIG instance under its parent), and the JSON of what an instance is and what it was
// estimated to draw, always apart from the measured fields.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analyze/analysis.hpp"

namespace gpuscope::report {

// Indices into a.gpus: every GPU that is not a MIG instance in its order, each followed by its
// instances; instances whose parent is not in the analysis at the end.
std::vector<std::size_t> gpu_display_order(const analyze::Analysis& a);

bool has_mig_instances(const analyze::Analysis& a);

// A GPU's MIG fields for gpus[] of analyze --json: "mig" (who the instance is; null for a GPU),
// "mig_enabled", "estimated" (an instance's estimated share) and "mig_split" (a parent's).
void add_mig_json(const analyze::GpuReport& g, nlohmann::json& gpu);

// The lines under the Per GPU table when it lists MIG instances: what "est." means, each parent's
// unattributed share, the instances' own balance.
std::string mig_table_notes(const analyze::Analysis& a, bool several_hosts);

}  // namespace gpuscope::report
