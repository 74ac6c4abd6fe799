#include "report/processes_view.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "analyze/processes.hpp"

namespace gpuscope::report {

using analyze::Analysis;
using nlohmann::json;

namespace {

// Who a process was, in one cell: its container, pod, SLURM job or rank.
std::string process_where(const GpuProcess& p) {
  std::string out;
  for (const auto& part : analyze::workload_parts(p)) out += (out.empty() ? "" : ", ") + part;
  return out.empty() ? "-" : out;
}

std::string memory_text(std::optional<std::uint64_t> bytes) {
  if (!bytes) return "-";
  const double mib = static_cast<double>(*bytes) / (1024.0 * 1024.0);
  return mib >= 1024 ? fmt::format("{:.1f} GiB", mib / 1024) : fmt::format("{:.0f} MiB", mib);
}

}  // namespace

// Which processes used each GPU (nothing when the runs recorded none).
std::string processes_text(const Analysis& a, const Style& style) {
  if (a.processes.empty()) return "";
  std::vector<std::vector<std::string>> rows;
  constexpr std::size_t kShown = 40;
  for (std::size_t i = 0; i < a.processes.size() && i < kShown; ++i) {
    const auto& u = a.processes[i];
    const auto& p = u.process;
    const std::string job = !p.in_job ? "-" : (*p.in_job ? "yes" : style.warn("no"));
    rows.push_back({u.gpu, std::to_string(p.pid), p.command.value_or("?"), p.user.value_or("-"),
                    process_where(p), job, memory_text(u.peak_memory_bytes),
                    u.mean_sm_percent ? fmt::format("{:.0f} %", *u.mean_sm_percent) : "-",
                    seconds_text(u.last_s - u.first_s)});
  }
  std::string out = "\n" + style.bold("Processes on the GPUs") + "\n";
  out += table({"GPU", "pid", "command", "user", "container / pod / job", "in job", "peak mem",
                "SM", "seen"},
               rows, style);
  if (a.processes.size() > kShown) {
    out += style.dim(
               fmt::format("… and {} more (--json lists them all)", a.processes.size() - kShown)) +
           "\n";
  }
  return out;
}

json processes_json(const Analysis& a) {
  json out = json::array();
  for (const auto& u : a.processes) {
    const auto& p = u.process;
    out.push_back({{"run_id", u.run_id},
                   {"device_index", u.device_index},
                   {"gpu", u.gpu},
                   {"pid", p.pid},
                   {"command", opt(p.command)},
                   {"command_line", opt(p.command_line)},
                   {"user", opt(p.user)},
                   {"uid", opt(p.uid)},
                   {"container_id", opt(p.container_id)},
                   {"container_runtime", opt(p.container_runtime)},
                   {"pod_uid", opt(p.pod_uid)},
                   {"pod_name", opt(p.pod_name)},
                   {"pod_namespace", opt(p.pod_namespace)},
                   {"slurm_job_id", opt(p.slurm_job_id)},
                   {"slurm_step", opt(p.slurm_step)},
                   {"launcher", opt(p.launcher)},
                   {"rank", opt(p.rank)},
                   {"local_rank", opt(p.local_rank)},
                   {"in_job", opt(p.in_job)},
                   {"first_s", u.first_s},
                   {"last_s", u.last_s},
                   {"looks", u.looks},
                   {"peak_memory_bytes", opt(u.peak_memory_bytes)},
                   {"mean_sm_percent", opt(u.mean_sm_percent)}});
  }
  return out;
}

}  // namespace gpuscope::report
