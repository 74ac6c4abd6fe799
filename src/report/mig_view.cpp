#include "report/mig_view.hpp"

#include <fmt/format.h>

#include <map>
#include <utility>

#include "analyze/mig_instances.hpp"
#include "report/analysis_view.hpp"

namespace gpuscope::report {
namespace {

using nlohmann::json;

template <typename T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

}  // namespace

bool has_mig_instances(const analyze::Analysis& a) {
  for (const auto& g : a.gpus) {
    if (g.key.mig) return true;
  }
  return false;
}

std::vector<std::size_t> gpu_display_order(const analyze::Analysis& a) {
  std::vector<std::size_t> order;
  if (!has_mig_instances(a)) {
    for (std::size_t i = 0; i < a.gpus.size(); ++i) order.push_back(i);
    return order;
  }
  const auto parents = analyze::mig_parents(a);
  std::map<std::size_t, std::vector<std::size_t>> children;
  std::vector<std::size_t> orphans;
  for (std::size_t i = 0; i < a.gpus.size(); ++i) {
    if (!a.gpus[i].key.mig) continue;
    if (parents[i])
      children[*parents[i]].push_back(i);
    else
      orphans.push_back(i);
  }
  for (std::size_t i = 0; i < a.gpus.size(); ++i) {
    if (a.gpus[i].key.mig) continue;
    order.push_back(i);
    const auto it = children.find(i);
    if (it != children.end()) order.insert(order.end(), it->second.begin(), it->second.end());
  }
  order.insert(order.end(), orphans.begin(), orphans.end());
  return order;
}

void add_mig_json(const analyze::GpuReport& g, json& gpu) {
  gpu["mig_enabled"] = opt(g.key.mig_enabled);
  json mig = nullptr;
  if (g.key.mig) {
    const MigIdentity& m = *g.key.mig;
    mig = {{"parent_index", m.parent_index},
           {"mig_index", m.mig_index},
           {"gpu_instance_id", m.gpu_instance_id},
           {"compute_instance_id", opt(m.compute_instance_id)},
           {"profile", opt(m.profile)},
           {"gpu_slices", opt(m.gpu_slices)},
           {"compute_slices", opt(m.compute_slices)},
           {"multiprocessors", opt(m.multiprocessors)},
           {"parent_slices", opt(m.parent_slices)},
           {"label", mig_label(m)}};
  }
  gpu["mig"] = mig;
  json estimated = nullptr;
  if (g.estimated) {
    const auto& e = *g.estimated;
    estimated = {{"power_w", opt(e.power_w)}, {"energy_j", e.energy_j}, {"share", e.share},
                 {"method", e.method},        {"notes", e.notes},       {"estimate", true}};
  }
  gpu["estimated"] = estimated;
  json split = nullptr;
  if (g.mig_split) {
    const auto& s = *g.mig_split;
    split = {{"instances", s.instances},           {"energy_j", s.energy_j},
             {"unattributed_j", s.unattributed_j}, {"unattributed_w", opt(s.unattributed_w)},
             {"idle_power_w", s.idle_power_w},     {"idle_found", s.idle_found}};
  }
  gpu["mig_split"] = split;
}

std::string mig_table_notes(const analyze::Analysis& a, bool several_hosts) {
  std::string out =
      "  est.: an ESTIMATED share of the parent GPU's measured energy and power (its slices "
      "weighted by its activity; docs/analysis.md \"MIG instances\"); not measured, and not in "
      "the totals\n";
  for (const auto& g : a.gpus) {
    if (!g.mig_split) continue;
    const auto& s = *g.mig_split;
    out += fmt::format("  {}: {} measured, {} of it unattributed (slices no instance held){}\n",
                       g.key.label(several_hosts), format_energy(s.energy_j),
                       format_energy(s.unattributed_j),
                       s.idle_found ? fmt::format("; idle power {:.0f} W", s.idle_power_w)
                                    : "; no interval with every instance idle: no idle part");
  }
  if (a.mig_balance) {
    out += fmt::format(
        "  MIG instances' balance (activity of their own instance): max/mean {:.2f}, "
        "coefficient of variation {:.2f}\n",
        a.mig_balance->max_over_mean, a.mig_balance->cv);
  }
  return out;
}

}  // namespace gpuscope::report
