// MIG instances in an Analysis (docs/analysis.md, "MIG instances"): each instance tied to its
// parent GPU, its estimated share of the parent's energy (analyze/mig_share), and the load
// balance with instances compared among themselves.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "analyze/analysis.hpp"

namespace gpuscope::analyze {

// For every GPU of `a.gpus`: the index of its parent when it is a MIG instance whose parent (same
// run, the parent's index) is in the analysis; nullopt otherwise.
std::vector<std::optional<std::size_t>> mig_parents(const Analysis& a);

// Whether a GPU is a MIG parent with instances in the analysis (`parents` as mig_parents gives).
std::vector<bool> mig_parent_flags(const Analysis& a,
                                   const std::vector<std::optional<std::size_t>>& parents);

// Fills GpuReport::estimated of every instance and GpuReport::mig_split of every parent from the
// GPUs' bins (index into a.gpus, bins), with notes on what could not be estimated.
void estimate_mig_shares(Analysis& a, std::span<const std::pair<std::size_t, MigBins>> bins);

// Analysis::balance over whole GPUs (MIG parents with instances left out) and
// Analysis::mig_balance over MIG instances; each needs two members.
void balance_with_instances(Analysis& a, double threshold);

}  // namespace gpuscope::analyze
