// MIG instances' ESTIMATED share of their parent GPU's power and energy (docs/analysis.md, "MIG
// instances"). NVML measures power and energy for the whole GPU only; an instance's share is
// computed here, interval by interval, from its compute slices weighted by its activity
// (Kepler's MIG attribution, sustainable-computing-io/kepler PR #1292), normalised so that the
// shares and the unattributed rest sum to the parent's measured energy (arXiv:2501.17752).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/mig.hpp"

namespace gpuscope::analyze {

// An instance below this activity (0..1) counts as idle when looking for the parent's idle power.
inline constexpr double kMigIdleActivity = 0.01;

// What an instance is shown as its share: never a measurement.
struct MigEstimate {
  double energy_j = 0;             // the instance's share of the parent's measured energy
  std::optional<double> power_w;   // energy_j over the time the parent's energy covers
  double share = 0;                // energy_j / the parent's energy (0..1)
  std::string method;              // "slices × activity", or "slices only" without activity data
  std::vector<std::string> notes;  // why a part of it is by slices only
};

// What a MIG-enabled GPU's measured energy was split into.
struct MigParentSplit {
  std::size_t instances = 0;
  double energy_j = 0;        // the parent's measured energy that was split
  double unattributed_j = 0;  // the share of slices no instance held, and unknown instances'
  std::optional<double> unattributed_w;
  double idle_power_w = 0;  // the idle part (0 when no interval had every instance idle)
  bool idle_found = false;
};

// The compute slices of an instance as a fraction of its GPU's: gpu_slices / parent_slices, else
// the profile's "<n>g" / parent_slices; nullopt when either is unknown.
std::optional<double> mig_slice_share(const MigIdentity& mig);

// One GPU's measurements on the analysis' over-space grid (bins of `bin_s` from t = 0), for the
// split. A parent: energy_j and covered_s per bin. An instance: activity per bin (mean, 0..1; NaN
// where it was sampled without activity data) and whether it had samples there at all.
struct MigBins {
  double bin_s = 0;
  std::vector<double> energy_j, covered_s;  // parent
  std::vector<double> activity;             // instance
  std::vector<std::uint8_t> present;        // instance
};

// A parent's bins: its energy counter's increases split at the bin edges (counter_energy_in), or
// where it has no counter its power integrated per bin; covered_s is each bin's part of the span
// of the readings used. Empty when there is neither.
MigBins mig_parent_bins(std::span<const double> t_s, std::span<const double> counter_mj,
                        std::span<const double> power_w, double max_gap_s, double bin_s,
                        std::size_t bins);

// An instance's bins from its samples' activity (NaN: none in that sample).
MigBins mig_instance_bins(std::span<const double> t_s, std::span<const double> activity,
                          double bin_s, std::size_t bins);

struct MigSplitInstance {
  double slices = 0;  // mig_slice_share
  const MigBins* bins = nullptr;
};

struct MigSplitResult {
  std::vector<double> energy_j;               // per instance
  std::vector<std::size_t> shared_bins;       // per instance: bins with energy it was present in
  std::vector<std::size_t> slices_only_bins;  // per instance: those shared without activity
  double energy_j_total = 0;                  // the parent's energy over the bins
  double unattributed_j = 0;
  double covered_s = 0;
  double idle_power_w = 0;
  bool idle_found = false;
};

// Splits the parent's energy, bin by bin: the idle part (min(E, P_idle × covered)) by slices
// over all the GPU's slices; the rest to instances without activity data by their slices, and
// what remains in proportion to slices × activity over the instances with activity data (by
// slices when none was active). What no instance took is unattributed. P_idle is the parent's
// lowest mean power over bins (at least half covered) where every instance sampled was idle.
MigSplitResult split_mig_energy(const MigBins& parent, std::span<const MigSplitInstance> instances);

}  // namespace gpuscope::analyze
