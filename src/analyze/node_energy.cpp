#include "analyze/node_energy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analyze/carbon.hpp"

namespace gpuscope::analyze {

namespace {

// What a domain counts as, and why not when it is not added (docs/node-energy.md).
std::pair<NodeRole, std::string> role_of(const NodeEnergyDomain& d) {
  if (d.includes_gpu) return {NodeRole::NotAdded, "includes the GPU"};
  if (!d.additive) {
    if (d.kind == "core" || d.kind == "uncore") return {NodeRole::NotAdded, "inside its package"};
    if (d.kind == "psys") return {NodeRole::NotAdded, "contains the packages"};
    if (d.kind == "cpu" || d.kind == "sysio") return {NodeRole::NotAdded, "inside its socket's"};
    return {NodeRole::NotAdded, "not known to add"};
  }
  return {d.kind == "dram" ? NodeRole::Dram : NodeRole::Cpu, ""};
}

// The running total at time t, interpolated between the readings around it (clamped).
double at(const std::vector<double>& t_s, const std::vector<double>& joules, double t) {
  if (t <= t_s.front()) return joules.front();
  if (t >= t_s.back()) return joules.back();
  const auto hi =
      static_cast<std::size_t>(std::upper_bound(t_s.begin(), t_s.end(), t) - t_s.begin());
  const std::size_t lo = hi - 1;
  const double span = t_s[hi] - t_s[lo];
  const double f = span > 0 ? (t - t_s[lo]) / span : 1.0;
  return joules[lo] + f * (joules[hi] - joules[lo]);
}

// The energy of each pair of readings inside [a, b] as wall-clock intervals (a pair cut by an
// edge keeps its share in proportion to time), for the grid series' join.
std::vector<EnergyInterval> intervals_in(const NodeDomainSeries& s, double a, double b) {
  std::vector<EnergyInterval> out;
  for (std::size_t k = 1; k < s.t_s.size(); ++k) {
    const double lo = std::max(a, s.t_s[k - 1]);
    const double hi = std::min(b, s.t_s[k]);
    const double span = s.t_s[k] - s.t_s[k - 1];
    if (hi <= lo || span <= 0) continue;
    const double f0 = (lo - s.t_s[k - 1]) / span, f1 = (hi - s.t_s[k - 1]) / span;
    const double wall_span = static_cast<double>(s.wall_ns[k] - s.wall_ns[k - 1]);
    out.push_back({s.wall_ns[k - 1] + static_cast<std::int64_t>(f0 * wall_span),
                   s.wall_ns[k - 1] + static_cast<std::int64_t>(f1 * wall_span),
                   (f1 - f0) * (s.joules[k] - s.joules[k - 1])});
  }
  return out;
}

void add(std::optional<double>& sum, std::optional<double> value) {
  if (value) sum = sum.value_or(0) + *value;
}

// The job's share of each host's CPU time, first to last full reading; absent where unknown.
std::map<std::string, double> shares(const NodeEnergyInput& in, std::vector<std::string>& notes) {
  std::map<std::string, double> out;
  for (const auto& run : in.cpu_times) {
    std::vector<const NodeCpuTime*> full;
    for (const auto& t : run.times) {
      if (t.cgroup_usage_usec && t.node_busy_usec) full.push_back(&t);
    }
    if (full.size() < 2 || out.count(run.host) != 0) continue;
    const double job =
        static_cast<double>(*full.back()->cgroup_usage_usec - *full.front()->cgroup_usage_usec);
    const double node =
        static_cast<double>(*full.back()->node_busy_usec - *full.front()->node_busy_usec);
    if (node <= 0 || job < 0) continue;
    if (job > node * 1.05) {
      notes.push_back(fmt::format(
          "{}the job's cgroup used more CPU time than the node's busy time ({:.1f} s against "
          "{:.1f} s): its share is taken as 100 %",
          run.host.empty() ? "" : run.host + ": ", job / 1e6, node / 1e6));
    }
    out[run.host] = std::clamp(job / node, 0.0, 1.0);
  }
  return out;
}

double carbon_of(const std::vector<EnergyInterval>& energy, const NodeEnergyInput& in) {
  if (in.series != nullptr && !in.series->periods.empty()) {
    std::vector<IntensityInterval> grid;
    for (const auto& p : in.series->periods)
      grid.push_back({p.start_wall_ns, p.end_wall_ns, p.g_per_kwh});
    return carbon_grams(energy, grid, in.pue);
  }
  double joules = 0;
  for (const auto& e : energy) joules += e.joules;
  return carbon_grams(joules, in.flat_g_per_kwh, in.pue);
}

// The counted domains: the first run of each host that recorded any (a merged job whose ranks
// share a node recorded the node's energy once per rank: counted once).
std::vector<const NodeDomainSeries*> counted(const NodeEnergyInput& in,
                                             std::vector<std::string>& notes) {
  std::map<std::string, std::size_t> first_run;
  std::set<std::string> said;
  std::vector<const NodeDomainSeries*> out;
  for (const auto& s : in.domains) {
    const auto [it, fresh] = first_run.emplace(s.host, s.run);
    if (!fresh && it->second != s.run) {
      if (said.insert(s.host).second) {
        notes.push_back(fmt::format(
            "several runs recorded the node energy of {}: the first one's is counted, once",
            s.host.empty() ? "the same node" : s.host));
      }
      continue;
    }
    out.push_back(&s);
  }
  return out;
}

void phase_figures(const NodeEnergyInput& in, const std::vector<const NodeDomainSeries*>& domains,
                   NodeEnergy& out) {
  std::map<std::pair<std::string, std::string>, NodePhaseEnergy> by_name;
  std::vector<std::pair<std::string, std::string>> order;
  for (const auto& span : in.phases) {
    const auto key = std::make_pair(span.name, span.source);
    auto [it, fresh] = by_name.try_emplace(key);
    if (fresh) {
      it->second.name = span.name;
      it->second.source = span.source;
      order.push_back(key);
    }
    for (const auto* s : domains) {
      const NodeRole role = role_of(s->domain).first;
      if (role == NodeRole::NotAdded || s->run != span.run) continue;
      const auto j = joules_between(s->t_s, s->joules, span.start_s, span.end_s);
      add(role == NodeRole::Cpu ? it->second.cpu_j : it->second.dram_j, j);
    }
  }
  for (const auto& key : order) {
    NodePhaseEnergy p = by_name[key];
    for (const auto& [name, j] : in.phase_gpu_j) {
      if (name == key.first) p.gpu_j = j;
    }
    add(p.total_j, p.gpu_j);
    add(p.total_j, p.cpu_j);
    add(p.total_j, p.dram_j);
    out.phases.push_back(std::move(p));
  }
}

}  // namespace

const char* node_role_name(NodeRole role) {
  switch (role) {
    case NodeRole::Cpu:
      return "cpu";
    case NodeRole::Dram:
      return "dram";
    case NodeRole::NotAdded:
      break;
  }
  return "not added";
}

std::optional<double> joules_between(const std::vector<double>& t_s,
                                     const std::vector<double>& joules, double a, double b) {
  if (t_s.size() < 2 || t_s.size() != joules.size() || b < a) return std::nullopt;
  return std::max(0.0, at(t_s, joules, b) - at(t_s, joules, a));
}

std::optional<NodeEnergy> node_energy(const NodeEnergyInput& in) {
  if (in.domains.empty()) return std::nullopt;
  NodeEnergy out;
  const auto domains = counted(in, out.notes);
  std::vector<EnergyInterval> node_energy;
  const double a = in.window_start_s, b = in.window_end_s;
  for (const auto* s : domains) {
    NodeDomainFigure f;
    f.host = s->host;
    f.domain = s->domain;
    std::tie(f.role, f.why_not_added) = role_of(s->domain);
    f.joules = joules_between(s->t_s, s->joules, a, b);
    const double covered =
        s->t_s.empty() ? 0.0 : std::min(b, s->t_s.back()) - std::max(a, s->t_s.front());
    if (f.joules && covered > 0) f.mean_power_w = *f.joules / covered;
    if (f.role != NodeRole::NotAdded && f.joules) {
      add(f.role == NodeRole::Cpu ? out.cpu_j : out.dram_j, f.joules);
      const auto parts = intervals_in(*s, a, b);
      node_energy.insert(node_energy.end(), parts.begin(), parts.end());
    } else if (f.role != NodeRole::NotAdded) {
      out.notes.push_back(fmt::format("{} ({}) has fewer than two readings in the window",
                                      s->domain.name, s->domain.zone));
    }
    out.domains.push_back(std::move(f));
  }
  out.gpu_j = in.gpu_j;
  add(out.total_j, out.gpu_j);
  add(out.total_j, out.cpu_j);
  add(out.total_j, out.dram_j);
  if (out.cpu_j || out.dram_j) {
    out.node_carbon_g = carbon_of(node_energy, in);
    out.total_carbon_g = *out.node_carbon_g + in.gpu_carbon_g.value_or(0);
  }
  // The job's share: each host's CPU and DRAM energy times its share of that host's CPU time.
  const auto share = shares(in, out.notes);
  double job_j = 0, of_j = 0;
  for (const auto* s : domains) {
    const auto role = role_of(s->domain).first;
    const auto it = share.find(s->host);
    if (role == NodeRole::NotAdded || it == share.end()) continue;
    const double j = joules_between(s->t_s, s->joules, a, b).value_or(0);
    job_j += it->second * j;
    of_j += j;
  }
  if (of_j > 0) {
    out.job_cpu_dram_j = job_j;
    out.job_share = job_j / of_j;
  }
  phase_figures(in, domains, out);
  return out;
}

}  // namespace gpuscope::analyze
