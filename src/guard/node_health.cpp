#include "guard/node_health.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/xid_catalog.hpp"

namespace gpuscope::guard {
namespace {

bool positive(const std::optional<double>& v) {
  return v && *v > 0.5;
}

// Why `gpu` is broken, or "".
std::string gpu_fault(const HealthRule& rule, const GpuHealth& gpu) {
  if (positive(gpu.xid_events)) {
    for (const auto& number : {gpu.xid_last, gpu.xid_max}) {
      if (!number || *number < 1 || *number >= 1e6) continue;
      const auto xid = static_cast<unsigned>(std::lround(*number));
      if (std::find(rule.xids.begin(), rule.xids.end(), xid) != rule.xids.end()) {
        return fmt::format("{} on {}", xid_title(xid), gpu.gpu);
      }
    }
  }
  if (rule.uncorrected_ecc && positive(gpu.uncorrected_ecc)) {
    return fmt::format("{:.0f} uncorrected ECC error{} on {}", *gpu.uncorrected_ecc,
                       *gpu.uncorrected_ecc >= 1.5 ? "s" : "", gpu.gpu);
  }
  if (rule.row_remap_failure && positive(gpu.remap_failure)) {
    return fmt::format("a row remap failed on {}", gpu.gpu);
  }
  if (rule.row_remap_pending && positive(gpu.remap_pending)) {
    return fmt::format("a row remap waits for a reset on {}", gpu.gpu);
  }
  return {};
}

}  // namespace

std::vector<NodeFault> node_faults(const HealthRule& rule, std::span<const GpuHealth> gpus) {
  std::map<std::string, std::string> first;                              // node → reason
  std::map<std::string, std::pair<std::size_t, std::size_t>> reporting;  // node → (yes, all)
  if (!rule.enabled) return {};
  for (const auto& gpu : gpus) {
    auto& count = reporting[gpu.node];
    ++count.second;
    if (gpu.reporting) ++count.first;
    const std::string why = gpu_fault(rule, gpu);
    if (!why.empty() && first.count(gpu.node) == 0) first[gpu.node] = why;
  }
  if (rule.lost_gpu) {
    for (const auto& gpu : gpus) {
      const auto& count = reporting[gpu.node];
      if (!gpu.reporting && count.first > 0 && first.count(gpu.node) == 0) {
        first[gpu.node] = fmt::format(
            "{} stopped reporting while the node's other GPUs went on "
            "(a lost GPU)",
            gpu.gpu);
      }
    }
  }
  std::vector<NodeFault> out;
  for (const auto& [node, why] : first) out.push_back({node, "gpuscope: " + why});
  return out;
}

DrainPlan plan_drains(const HealthRule& rule, std::size_t max_drains,
                      std::span<const NodeFault> faults, std::span<const SlurmNode> nodes) {
  std::map<std::string, const SlurmNode*> by_name;
  std::map<std::string, std::pair<std::size_t, std::size_t>> partitions;  // (out, all)
  for (const auto& n : nodes) {
    by_name[n.name] = &n;
    for (const auto& p : n.partitions) {
      ++partitions[p].second;
      if (n.drained) ++partitions[p].first;
    }
  }
  DrainPlan plan;
  for (const auto& fault : faults) {
    const auto node = by_name.find(fault.node);
    if (node == by_name.end()) {
      plan.held.emplace_back(fault, "sinfo does not know this node");
      continue;
    }
    if (node->second->drained) {
      plan.already.push_back(fault);
      continue;
    }
    if (plan.drain.size() >= max_drains) {
      plan.held.emplace_back(
          fault, fmt::format("this cycle drained {} already (max_drains_per_cycle)", max_drains));
      continue;
    }
    std::string full;
    for (const auto& p : node->second->partitions) {
      const auto [out, all] = partitions[p];
      const auto allowed = static_cast<std::size_t>(
          std::floor(rule.max_drained_share * static_cast<double>(all) + 1e-9));
      if (out + 1 > allowed) {
        full = fmt::format(
            "partition {} has {} of {} nodes out of service; max_drained_share "
            "{:g} allows {}",
            p, out, all, rule.max_drained_share, allowed);
        break;
      }
    }
    if (!full.empty()) {
      plan.held.emplace_back(fault, full);
      continue;
    }
    for (const auto& p : node->second->partitions) ++partitions[p].first;
    plan.drain.push_back(fault);
  }
  return plan;
}

}  // namespace gpuscope::guard
