#include "report/node_energy_view.hpp"

#include <fmt/format.h>

#include "report/analysis_view.hpp"
#include "util/text_table.hpp"

namespace gpuscope::report {
namespace {

using analyze::NodeEnergy;

std::string joules(const std::optional<double>& j) {
  return j ? format_energy(*j) : "-";
}

template <typename T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::string share_of(const std::optional<double>& part, const std::optional<double>& total) {
  if (!part || !total || *total <= 0) return "";
  return fmt::format("  ({:.1f} %)", 100 * *part / *total);
}

std::string domain_label(const analyze::NodeDomainFigure& d, bool hosts) {
  std::string out = hosts && !d.host.empty() ? d.host + " " : "";
  return out + d.domain.name + " (" + d.domain.zone + ")";
}

std::string totals_text(const NodeEnergy& n, const std::string& carbon) {
  std::string out;
  out += fmt::format("  GPUs                        {}{}\n", joules(n.gpu_j),
                     share_of(n.gpu_j, n.total_j));
  out += fmt::format("  CPUs (the node's)           {}{}\n", joules(n.cpu_j),
                     share_of(n.cpu_j, n.total_j));
  out += fmt::format("  memory (the node's)         {}{}\n", joules(n.dram_j),
                     n.dram_j ? share_of(n.dram_j, n.total_j) : "  (no DRAM domain)");
  out += fmt::format("  total                       {}{}\n", joules(n.total_j), carbon);
  if (n.job_share) {
    out += fmt::format(
        "  the job's CPU + memory      {}  (ESTIMATE: {:.0f} % of the node's CPU time was the "
        "job's cgroup's)\n",
        joules(n.job_cpu_dram_j), 100 * *n.job_share);
  }
  return out;
}

}  // namespace

std::string node_energy_text(const analyze::Analysis& a, bool color) {
  if (!a.node_energy) return "";
  const NodeEnergy& n = *a.node_energy;
  const auto bold = [color](const std::string& s) { return color ? "\033[1m" + s + "\033[0m" : s; };
  const auto dim = [color](const std::string& s) { return color ? "\033[2m" + s + "\033[0m" : s; };
  const std::string carbon =
      n.total_carbon_g ? fmt::format("  {:.1f} gCO2e", *n.total_carbon_g) : std::string();
  std::string out = "\n" + bold("Node energy (GPU, CPU, memory)") + "\n" + totals_text(n, carbon);
  out += dim("  CPU and memory energy is the whole node's, whatever ran on it; a GH200 module's "
             "meter includes the GPU and is never added (docs/node-energy.md)") +
         "\n";
  bool hosts = false;
  for (const auto& d : n.domains) hosts = hosts || d.host != n.domains.front().host;
  std::vector<std::vector<std::string>> rows;
  for (const auto& d : n.domains) {
    rows.push_back({domain_label(d, hosts), d.domain.kind,
                    d.domain.socket ? std::to_string(*d.domain.socket) : "-",
                    d.role == analyze::NodeRole::NotAdded ? "no: " + d.why_not_added
                                                          : analyze::node_role_name(d.role),
                    joules(d.joules),
                    d.mean_power_w ? fmt::format("{:.1f} W", *d.mean_power_w) : "-"});
  }
  const auto table = util::render_table({"domain", "kind", "socket", "added as", "energy", "power"},
                                        rows, {{util::Align::Left, util::Align::Left}, false});
  out += bold(table.header) + table.body;
  if (!n.phases.empty()) {
    rows.clear();
    for (const auto& p : n.phases) {
      rows.push_back({p.name, p.source, joules(p.gpu_j), joules(p.cpu_j), joules(p.dram_j),
                      joules(p.total_j)});
    }
    const auto phases = util::render_table({"phase", "source", "GPU", "CPU", "memory", "total"},
                                           rows, {{util::Align::Left, util::Align::Left}, false});
    out += bold(phases.header) + phases.body;
  }
  return out;
}

nlohmann::json node_energy_json(const analyze::Analysis& a) {
  if (!a.node_energy) return nullptr;
  const NodeEnergy& n = *a.node_energy;
  nlohmann::json domains = nlohmann::json::array();
  for (const auto& d : n.domains) {
    domains.push_back(
        {{"host", d.host},
         {"domain", d.domain.domain},
         {"source", d.domain.source},
         {"zone", d.domain.zone},
         {"name", d.domain.name},
         {"kind", d.domain.kind},
         {"socket", opt(d.domain.socket)},
         {"includes_gpu", d.domain.includes_gpu},
         {"added_as", analyze::node_role_name(d.role)},
         {"not_added_because",
          d.why_not_added.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.why_not_added)},
         {"energy_j", opt(d.joules)},
         {"mean_power_w", opt(d.mean_power_w)}});
  }
  nlohmann::json phases = nlohmann::json::array();
  for (const auto& p : n.phases) {
    phases.push_back({{"name", p.name},
                      {"source", p.source},
                      {"gpu_j", opt(p.gpu_j)},
                      {"cpu_j", opt(p.cpu_j)},
                      {"dram_j", opt(p.dram_j)},
                      {"total_j", opt(p.total_j)}});
  }
  return {{"gpu_j", opt(n.gpu_j)},
          {"cpu_j", opt(n.cpu_j)},
          {"dram_j", opt(n.dram_j)},
          {"total_j", opt(n.total_j)},
          {"cpu_dram_scope", "node"},
          {"node_carbon_g", opt(n.node_carbon_g)},
          {"total_carbon_g", opt(n.total_carbon_g)},
          {"job_estimate",
           {{"method", "cgroup CPU time share"},
            {"share", opt(n.job_share)},
            {"cpu_dram_j", opt(n.job_cpu_dram_j)}}},
          {"domains", domains},
          {"phases", phases}};
}

std::string node_energy_csv(const analyze::Analysis& a) {
  std::string out = "scope,host,name,kind,role,joules,mean_power_w,carbon_g\n";
  if (!a.node_energy) return out;
  const NodeEnergy& n = *a.node_energy;
  const auto num = [](const std::optional<double>& v) {
    return v ? fmt::format("{}", *v) : std::string();
  };
  out += fmt::format("total,,gpu,gpu,gpu,{},,\n", num(n.gpu_j));
  out += fmt::format("total,,cpu,cpu,cpu,{},,\n", num(n.cpu_j));
  out += fmt::format("total,,dram,dram,dram,{},,\n", num(n.dram_j));
  out += fmt::format("total,,total,total,total,{},,{}\n", num(n.total_j), num(n.total_carbon_g));
  out += fmt::format("estimate,,job cpu+dram (cgroup CPU time share),cpu+dram,estimate,{},,\n",
                     num(n.job_cpu_dram_j));
  for (const auto& d : n.domains) {
    out += fmt::format("domain,{},{},{},{},{},{},\n", util::csv_field(d.host),
                       util::csv_field(d.domain.name), d.domain.kind,
                       util::csv_field(analyze::node_role_name(d.role)), num(d.joules),
                       num(d.mean_power_w));
  }
  for (const auto& p : n.phases) {
    out +=
        fmt::format("phase,,{},{},total,{},,\n", util::csv_field(p.name), p.source, num(p.total_j));
  }
  return out;
}

}  // namespace gpuscope::report
