#include "exporter/node_energy_series.hpp"

#include <fmt/format.h>

#include "exporter/exposition.hpp"

namespace gpuscope::exporter {

void NodeEnergySeries::set_domains(const std::vector<NodeEnergyDomain>& domains) {
  const std::lock_guard lock(mutex_);
  values_.clear();
  for (const auto& d : domains) {
    Value v;
    v.domain = d;
    values_.push_back(std::move(v));
  }
  ++version_;
}

void NodeEnergySeries::add(const NodeEnergySample& sample) {
  const std::lock_guard lock(mutex_);
  for (auto& v : values_) {
    if (v.domain.domain != sample.domain) continue;
    v.previous_joules = v.joules;
    v.previous_mono_ns = v.mono_ns;
    v.joules = sample.joules;
    v.mono_ns = sample.mono_ns;
    v.power_w = sample.power_w;
    ++version_;
    return;
  }
}

std::vector<NodeEnergySeries::Power> NodeEnergySeries::powers() const {
  const std::lock_guard lock(mutex_);
  std::vector<Power> out;
  for (const auto& v : values_) {
    if (v.power_w) {
      out.push_back(Power{v.domain, *v.power_w});
    } else if (v.joules && v.previous_joules && v.mono_ns > v.previous_mono_ns) {
      const double seconds = static_cast<double>(v.mono_ns - v.previous_mono_ns) / 1e9;
      out.push_back(Power{v.domain, (*v.joules - *v.previous_joules) / seconds});
    }
  }
  return out;
}

std::string NodeEnergySeries::power_line() const {
  const auto all = powers();
  if (all.empty()) return {};
  double total = 0;
  std::string parts;
  for (const auto& p : all) {
    if (p.domain.additive) total += p.watts;
    parts += fmt::format("{}{} {:.0f} W", parts.empty() ? "" : ", ", p.domain.name, p.watts);
  }
  return fmt::format("CPU and memory {:.0f} W ({})", total, parts);
}

std::uint64_t NodeEnergySeries::version() const {
  const std::lock_guard lock(mutex_);
  return version_;
}

std::string NodeEnergySeries::render() const {
  const std::lock_guard lock(mutex_);
  std::string energy, power;
  for (const auto& v : values_) {
    const NodeEnergyDomain& d = v.domain;
    const std::string labels = fmt::format(
        "hostname=\"{}\",domain=\"{}\",kind=\"{}\",socket=\"{}\",source=\"{}\",zone=\"{}\","
        "additive=\"{}\",includes_gpu=\"{}\"",
        escape_label_value(hostname_), escape_label_value(d.name), escape_label_value(d.kind),
        d.socket ? std::to_string(*d.socket) : std::string(), escape_label_value(d.source),
        escape_label_value(d.zone), d.additive ? "true" : "false",
        d.includes_gpu ? "true" : "false");
    if (v.joules)
      energy += fmt::format("gpuscope_node_energy_joules_total{{{}}} {}\n", labels, *v.joules);
    if (v.power_w) power += fmt::format("gpuscope_node_power_watts{{{}}} {}\n", labels, *v.power_w);
  }
  std::string out;
  if (!energy.empty()) {
    out +=
        "# HELP gpuscope_node_energy_joules_total Energy of one of the node's RAPL domains or "
        "Grace power meters since the exporter started; sum only additive=\"true\" (the rest "
        "is inside another domain) and never add includes_gpu=\"true\" to GPU energy.\n"
        "# TYPE gpuscope_node_energy_joules_total counter\n" +
        energy;
  }
  if (!power.empty()) {
    out +=
        "# HELP gpuscope_node_power_watts Power a Grace power meter reads (its averaging "
        "window, docs/node-energy.md).\n# TYPE gpuscope_node_power_watts gauge\n" +
        power;
  }
  return out;
}

}  // namespace gpuscope::exporter
