// The node's own energy on /metrics beside the GPUs' (docs/node-energy.md): each RAPL
// domain's and Grace power meter's energy since serve started, as a counter, and a meter's power.
// Fed from the sampler's slow thread, rendered on scrapes: thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/node_energy.hpp"

namespace gpuscope::exporter {

class NodeEnergySeries {
 public:
  // `hostname`: the node's label value, as on the GPUs' series.
  explicit NodeEnergySeries(std::string hostname) : hostname_(std::move(hostname)) {}

  void set_domains(const std::vector<NodeEnergyDomain>& domains);
  void add(const NodeEnergySample& sample);
  // Changes with every reading: the exposition cache renders again when it moved.
  std::uint64_t version() const;
  // gpuscope_node_energy_joules_total and gpuscope_node_power_watts in the text format (HELP and
  // TYPE once each); empty before the first reading. Labels: hostname, domain (the zone's name,
  // "package-0", or the meter's label), kind, socket, source, zone, and additive /
  // includes_gpu, which say what may be summed (docs/node-energy.md).
  std::string render() const;

  // Each domain's power over its last two readings (a meter's own reading where it has one).
  struct Power {
    NodeEnergyDomain domain;
    double watts = 0;
  };
  std::vector<Power> powers() const;
  // "CPU and memory 187 W (package-0 85 W, package-1 90 W, dram 12 W)" for monitor: the
  // additive domains' sum and each domain; empty before two readings.
  std::string power_line() const;

 private:
  struct Value {
    NodeEnergyDomain domain;
    std::optional<double> joules;
    std::optional<double> power_w;
    std::optional<double> previous_joules;
    std::int64_t mono_ns = 0, previous_mono_ns = 0;
  };
  std::string hostname_;
  mutable std::mutex mutex_;
  std::vector<Value> values_;
  std::uint64_t version_ = 0;
};

}  // namespace gpuscope::exporter
