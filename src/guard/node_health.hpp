// Which nodes have a broken GPU and which of them guard may drain now (docs/guard.md, "Broken
// GPUs"). Pure: the readings come from the monitoring server, the nodes' partitions and states
// from sinfo, and the same inputs always give the same plan.
//
// A GPU is broken when, within the window, it reported an Xid the rules list (NVIDIA's "reset
// the GPU or reboot the node" ones by default: the last or the highest Xid of the window), an
// uncorrected ECC error, a failed row remap (or a pending one, when the rules ask), or it stopped
// reporting while the other GPUs of its node went on (a lost GPU; a node whose GPUs all went quiet
// is the exporter's or the node's outage, Slurm's business, not drained by guard).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fleet/gpu_health.hpp"
#include "guard/rules.hpp"

namespace gpuscope::guard {

// One GPU's health over a window, as the server summarised it (fleet/gpu_health.hpp).
using GpuHealth = fleet::GpuHealth;

struct NodeFault {
  std::string node;
  std::string reason;  // "gpuscope: Xid 79 on GPU-...: GPU has fallen off the bus", for Slurm
};

// The faults of each node with a broken GPU (the first found per node), nodes in name order.
std::vector<NodeFault> node_faults(const HealthRule& rule, std::span<const GpuHealth> gpus);

// A node as sinfo shows it.
struct SlurmNode {
  std::string name;
  std::vector<std::string> partitions;
  bool drained = false;  // DRAIN, DRAINING or DRAINED, DOWN: out of service already
};

struct DrainPlan {
  std::vector<NodeFault> drain;                         // drain these now
  std::vector<std::pair<NodeFault, std::string>> held;  // not now, and why
  std::vector<NodeFault> already;                       // out of service already
};

// Which faulty nodes to drain: never one already out of service, never more than the cycle's
// `max_drains`, and never so many that more than `max_drained_share` of a partition's nodes
// would be out of service at once (counting those already drained).
DrainPlan plan_drains(const HealthRule& rule, std::size_t max_drains,
                      std::span<const NodeFault> faults, std::span<const SlurmNode> nodes);

}  // namespace gpuscope::guard
