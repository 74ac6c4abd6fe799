#include "analyze/mig_instances.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <map>
#include <utility>

namespace gpuscope::analyze {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool several_hosts(const Analysis& a) {
  for (const auto& g : a.gpus) {
    const auto& first = a.gpus.front().key;
    if (g.key.where() != first.where() || g.key.rank != first.rank) return true;
  }
  return false;
}

// One parent and the instances of it, with their bins.
struct Family {
  const MigBins* parent = nullptr;
  std::vector<std::size_t> instances;  // indices into a.gpus
  std::vector<MigSplitInstance> split;
};

// An instance's estimate from the split, with the notes on what it lacked.
MigEstimate instance_estimate(const MigSplitResult& r, std::size_t j, bool slices_known) {
  MigEstimate e;
  e.energy_j = r.energy_j[j];
  if (r.covered_s > 0) e.power_w = e.energy_j / r.covered_s;
  e.share = r.energy_j_total > 0 ? e.energy_j / r.energy_j_total : 0;
  const std::size_t present = r.shared_bins[j];
  const std::size_t by_slices = r.slices_only_bins[j];
  e.method = by_slices > 0 && by_slices >= present ? "slices only" : "slices × activity";
  if (!slices_known) {
    e.method = "none";
    e.notes.push_back("its compute slices are unknown: no share (counted as unattributed)");
  } else if (by_slices > 0 && by_slices >= present) {
    e.notes.push_back("no activity data: its share is by its slices only");
  } else if (by_slices > 0) {
    e.notes.push_back(
        fmt::format("no activity data in {} of {} intervals: its share there is by its slices only",
                    by_slices, present));
  }
  return e;
}

}  // namespace

std::vector<std::optional<std::size_t>> mig_parents(const Analysis& a) {
  std::map<std::pair<std::int64_t, unsigned>, std::size_t> whole;
  for (std::size_t i = 0; i < a.gpus.size(); ++i) {
    const auto& k = a.gpus[i].key;
    if (!k.mig) whole.emplace(std::make_pair(k.run_id, k.device_index), i);
  }
  std::vector<std::optional<std::size_t>> out(a.gpus.size());
  for (std::size_t i = 0; i < a.gpus.size(); ++i) {
    const auto& k = a.gpus[i].key;
    if (!k.mig) continue;
    const auto it = whole.find({k.run_id, k.mig->parent_index});
    if (it != whole.end()) out[i] = it->second;
  }
  return out;
}

std::vector<bool> mig_parent_flags(const Analysis& a,
                                   const std::vector<std::optional<std::size_t>>& parents) {
  std::vector<bool> out(a.gpus.size(), false);
  for (const auto& p : parents) {
    if (p) out[*p] = true;
  }
  return out;
}

void estimate_mig_shares(Analysis& a, std::span<const std::pair<std::size_t, MigBins>> bins) {
  const auto parents = mig_parents(a);
  std::map<std::size_t, const MigBins*> bins_of;
  for (const auto& [gpu, b] : bins) bins_of[gpu] = &b;
  std::map<std::size_t, Family> families;  // by parent, in GPU order
  const bool hosts = several_hosts(a);
  static const MigBins kNoBins;
  for (std::size_t i = 0; i < a.gpus.size(); ++i) {
    if (!a.gpus[i].key.mig) continue;
    if (!parents[i]) {
      a.notes.push_back(
          fmt::format("{}: its parent GPU is not in the analysis: no estimated share "
                      "of its power and energy",
                      a.gpus[i].key.label(hosts)));
      continue;
    }
    Family& f = families[*parents[i]];
    const auto b = bins_of.find(i);
    const auto slices = mig_slice_share(*a.gpus[i].key.mig);
    f.instances.push_back(i);
    f.split.push_back({slices.value_or(0), b == bins_of.end() ? &kNoBins : b->second});
  }
  for (auto& [parent, f] : families) {
    const auto pb = bins_of.find(parent);
    GpuReport& p = a.gpus[parent];
    if (pb == bins_of.end() || pb->second->energy_j.empty()) {
      a.notes.push_back(fmt::format(
          "{}: neither its energy counter nor its power was recorded: its MIG instances have no "
          "estimated share",
          p.key.label(hosts)));
      continue;
    }
    const MigSplitResult r = split_mig_energy(*pb->second, f.split);
    for (std::size_t j = 0; j < f.instances.size(); ++j) {
      GpuReport& g = a.gpus[f.instances[j]];
      g.estimated = instance_estimate(r, j, mig_slice_share(*g.key.mig).has_value());
      for (const auto& note : g.estimated->notes) {
        a.notes.push_back(fmt::format("{}: {}", g.key.label(hosts), note));
      }
    }
    MigParentSplit split;
    split.instances = f.instances.size();
    split.energy_j = r.energy_j_total;
    split.unattributed_j = r.unattributed_j;
    if (r.covered_s > 0) split.unattributed_w = r.unattributed_j / r.covered_s;
    split.idle_power_w = r.idle_power_w;
    split.idle_found = r.idle_found;
    p.mig_split = split;
  }
}

void balance_with_instances(Analysis& a, double threshold) {
  const auto parents = mig_parents(a);
  const auto is_parent = mig_parent_flags(a, parents);
  std::vector<double> whole(a.gpus.size(), kNaN), instances(a.gpus.size(), kNaN), duration;
  std::size_t n_whole = 0, n_instances = 0;
  for (std::size_t i = 0; i < a.gpus.size(); ++i) {
    const GpuReport& g = a.gpus[i];
    duration.push_back(g.covered_s);
    if (g.key.mig) {
      instances[i] = g.activity.value_or(kNaN);
      ++n_instances;
    } else if (!is_parent[i]) {
      whole[i] = g.activity.value_or(kNaN);
      ++n_whole;
    }
  }
  if (n_whole >= 2) a.balance = load_balance(whole, duration, threshold);
  if (n_instances >= 2) a.mig_balance = load_balance(instances, duration, threshold);
}

}  // namespace gpuscope::analyze
