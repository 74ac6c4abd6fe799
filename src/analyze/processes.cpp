#include "analyze/processes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "core/mig.hpp"

namespace gpuscope::analyze {
namespace {

std::string gib_text(std::uint64_t bytes) {
  const double gib = static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0);
  if (gib >= 1) return fmt::format("{:.1f} GiB", gib);
  return fmt::format("{:.0f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

std::string duration_text(double s) {
  if (s < 1) return "under a second";
  if (s < 120) return fmt::format("{:.0f} s", s);
  return fmt::format("{:.0f} min", s / 60);
}

}  // namespace

std::vector<std::string> workload_parts(const GpuProcess& p) {
  std::vector<std::string> parts;
  if (p.container_id) {
    parts.push_back(fmt::format("{} {}", p.container_runtime.value_or("container"),
                                p.container_id->substr(0, 12)));
  }
  if (p.pod_name || p.pod_uid) {
    parts.push_back(fmt::format("pod {}{}", p.pod_namespace ? *p.pod_namespace + "/" : "",
                                p.pod_name ? *p.pod_name : p.pod_uid->substr(0, 8)));
  }
  if (p.slurm_job_id) {
    parts.push_back(fmt::format("SLURM job {}{}", *p.slurm_job_id,
                                p.slurm_step ? "." + *p.slurm_step : std::string()));
  }
  if (p.rank) parts.push_back(fmt::format("rank {}", *p.rank));
  return parts;
}

std::string describe(const GpuProcess& p) {
  std::vector<std::string> details;
  details.push_back(fmt::format("pid {}", p.pid));
  if (p.user) details.push_back("user " + *p.user);
  for (auto& part : workload_parts(p)) details.push_back(std::move(part));
  std::string text = p.command.value_or("process");
  text += " (";
  for (std::size_t i = 0; i < details.size(); ++i) text += (i ? ", " : "") + details[i];
  return text + ")";
}

std::vector<ProcessUse> summarise_processes(const RunProcesses& run,
                                            const std::function<double(std::int64_t)>& seconds) {
  // The newest processes row of each pid first seen before the sample (a reused pid is a new
  // row with a later first_mono_ns).
  std::multimap<unsigned, const GpuProcess*> by_pid;
  for (const auto& p : run.processes) by_pid.emplace(p.pid, &p);
  auto who = [&](const ProcessSample& s) -> const GpuProcess* {
    const GpuProcess* best = nullptr;
    auto [begin, end] = by_pid.equal_range(s.pid);
    for (auto it = begin; it != end; ++it) {
      if (it->second->first_mono_ns <= s.mono_ns &&
          (best == nullptr || it->second->first_mono_ns > best->first_mono_ns)) {
        best = it->second;
      }
    }
    return best;
  };
  struct Acc {
    ProcessUse use;
    double sm_sum = 0;
    std::size_t sm_count = 0;
  };
  // Keyed by GPU, then the process row (or the bare pid).
  std::map<std::tuple<unsigned, const GpuProcess*, unsigned>, Acc> acc;
  for (const auto& s : run.samples) {
    const double t = seconds(s.mono_ns);
    if (std::isnan(t)) continue;
    const GpuProcess* process = who(s);
    auto key = std::make_tuple(s.device_index, process, process ? 0U : s.pid);
    auto [it, inserted] = acc.try_emplace(key);
    Acc& a = it->second;
    if (inserted) {
      a.use.run_id = run.run_id;
      a.use.device_index = s.device_index;
      a.use.gpu = run.where + device_index_label(s.device_index);
      if (process) {
        a.use.process = *process;
      } else {
        a.use.process.pid = s.pid;
      }
      a.use.first_s = t;
    }
    a.use.last_s = t;
    ++a.use.looks;
    if (s.used_memory_bytes) {
      a.use.peak_memory_bytes = std::max(a.use.peak_memory_bytes.value_or(0), *s.used_memory_bytes);
    }
    if (s.sm_percent) {
      a.sm_sum += *s.sm_percent;
      ++a.sm_count;
    }
  }
  std::vector<ProcessUse> out;
  for (auto& [key, a] : acc) {
    if (a.sm_count > 0) a.use.mean_sm_percent = a.sm_sum / static_cast<double>(a.sm_count);
    out.push_back(std::move(a.use));
  }
  std::stable_sort(out.begin(), out.end(), [](const ProcessUse& x, const ProcessUse& y) {
    return std::tie(x.device_index, x.first_s) < std::tie(y.device_index, y.first_s);
  });
  return out;
}

std::vector<Finding> process_findings(const std::vector<ProcessUse>& uses) {
  std::vector<Finding> out;
  // Per GPU (of each run), the processes outside the job, in order.
  std::map<std::pair<std::int64_t, unsigned>, std::vector<const ProcessUse*>> foreign;
  for (const auto& use : uses) {
    if (use.process.in_job == false) foreign[{use.run_id, use.device_index}].push_back(&use);
  }
  for (const auto& [key, list] : foreign) {
    const ProcessUse& first = *list.front();
    double seen_s = 0;
    std::uint64_t peak = 0;
    for (const ProcessUse* use : list) {
      seen_s = std::max(seen_s, use->last_s - use->first_s);
      peak = std::max(peak, use->peak_memory_bytes.value_or(0));
    }
    std::string who = describe(first.process);
    if (list.size() > 1) who += fmt::format(" and {} more", list.size() - 1);
    std::string text =
        fmt::format("{} was also used by {} process{} outside this job: {}; seen for {}", first.gpu,
                    list.size(), list.size() == 1 ? "" : "es", who, duration_text(seen_s));
    if (peak > 0) text += fmt::format(", holding up to {}", gib_text(peak));
    text += " (your job shared the GPU, so its timings and energy include theirs)";
    out.push_back({"foreign_process", std::move(text)});
  }
  return out;
}

}  // namespace gpuscope::analyze
