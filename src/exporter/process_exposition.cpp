#include "exporter/process_exposition.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "exporter/exposition.hpp"

namespace gpuscope::exporter {
namespace {

void add_label(std::string& out, std::string_view name, const std::optional<std::string>& value) {
  if (!value || value->empty()) return;
  out += out.empty() ? "" : ",";
  out += name;
  out += "=\"";
  out += escape_label_value(*value);
  out += '"';
}

// Processes of each GPU, the most memory first (then the lower pid, so the order is stable).
std::map<unsigned, std::vector<const std::pair<ProcessSample, GpuProcess>*>> by_gpu(
    const ProcessesNow& processes) {
  std::map<unsigned, std::vector<const std::pair<ProcessSample, GpuProcess>*>> out;
  for (const auto& p : processes) out[p.first.device_index].push_back(&p);
  for (auto& [device, list] : out) {
    std::stable_sort(list.begin(), list.end(), [](const auto* a, const auto* b) {
      const auto ma = a->first.used_memory_bytes.value_or(0);
      const auto mb = b->first.used_memory_bytes.value_or(0);
      return ma != mb ? ma > mb : a->first.pid < b->first.pid;
    });
  }
  return out;
}

std::optional<std::string> short_container(const GpuProcess& p) {
  if (!p.container_id) return std::nullopt;
  return p.container_id->substr(0, 12);
}

}  // namespace

std::optional<ProcessSeries> process_series_from_text(std::string_view text) {
  if (text == "off") return ProcessSeries::Off;
  if (text == "safe") return ProcessSeries::Safe;
  if (text == "full") return ProcessSeries::Full;
  return std::nullopt;
}

std::string_view process_series_text(ProcessSeries series) {
  switch (series) {
    case ProcessSeries::Off:
      return "off";
    case ProcessSeries::Safe:
      return "safe";
    case ProcessSeries::Full:
      break;
  }
  return "full";
}

ProcessesNow reveal(ProcessesNow processes, ProcessSeries series) {
  if (series == ProcessSeries::Full) return processes;
  for (auto& [sample, process] : processes) {
    process.user.reset();
    process.uid.reset();
    process.command.reset();
    process.command_line.reset();
  }
  return processes;
}

std::map<unsigned, LabelList> workload_labels(const ProcessesNow& processes, Naming naming) {
  std::map<unsigned, LabelList> out;
  for (const auto& [device, list] : by_gpu(processes)) {
    // The process holding the most memory among those whose workload is known (a pid that
    // could not be resolved says nothing).
    for (const auto* entry : list) {
      const GpuProcess& p = entry->second;
      LabelList labels;
      if (naming == Naming::Jobstats) {
        // jobstats' exporter knows SLURM jobs only: the job's id and its user's uid.
        if (!p.slurm_job_id || p.slurm_job_id->empty()) continue;
        labels = {{"jobid", *p.slurm_job_id}, {"userid", p.uid ? std::to_string(*p.uid) : ""}};
        out[device] = std::move(labels);
        break;
      }
      auto add = [&](const char* name, const std::optional<std::string>& value) {
        if (value && !value->empty()) labels.emplace_back(name, *value);
      };
      add("pod", p.pod_name ? p.pod_name : p.pod_uid);
      add("namespace", p.pod_namespace);
      add("container", short_container(p));
      add(naming == Naming::Dcgm  ? "hpc_job"
          : naming == Naming::Amd ? "job_id"
                                  : "slurm_job_id",
          p.slurm_job_id);
      if (!labels.empty()) {
        out[device] = std::move(labels);
        break;
      }
    }
  }
  return out;
}

std::string render_processes(const ProcessesNow& processes,
                             const std::function<std::string(unsigned)>& gpu_labels,
                             std::size_t max_per_gpu) {
  if (max_per_gpu == 0) return {};
  struct Line {
    std::string labels;
    const ProcessSample* sample;
  };
  std::vector<Line> lines;
  std::vector<std::pair<std::string, std::size_t>> left_out;
  for (const auto& [device, list] : by_gpu(processes)) {
    const std::string gpu = gpu_labels(device);
    if (gpu.empty()) continue;
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (i == max_per_gpu) {
        left_out.emplace_back(gpu, list.size() - max_per_gpu);
        break;
      }
      const auto& [sample, process] = *list[i];
      std::string labels = gpu;
      add_label(labels, "pid", std::to_string(sample.pid));
      add_label(labels, "command", process.command);
      add_label(labels, "user", process.user);
      add_label(labels, "container", short_container(process));
      add_label(labels, "pod", process.pod_name ? process.pod_name : process.pod_uid);
      add_label(labels, "namespace", process.pod_namespace);
      add_label(labels, "slurm_job_id", process.slurm_job_id);
      lines.push_back({"{" + labels + "}", &sample});
    }
  }
  std::string out;
  if (lines.empty() && left_out.empty()) return out;
  auto series = [&](const char* name, const char* type, const char* help, auto value) {
    bool header = false;
    for (const auto& line : lines) {
      const std::optional<double> v = value(*line.sample);
      if (!v) continue;
      if (!header) {
        fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name,
                       type);
        header = true;
      }
      fmt::format_to(std::back_inserter(out), "{}{} {}\n", name, line.labels, format_value(*v));
    }
  };
  series("gpuscope_process_memory_used_bytes", "gauge",
         "GPU memory a process holds (NVML running compute processes).",
         [](const ProcessSample& s) -> std::optional<double> {
           if (!s.used_memory_bytes) return std::nullopt;
           return static_cast<double>(*s.used_memory_bytes);
         });
  series("gpuscope_process_sm_utilization_ratio", "gauge",
         "A process's share of the GPU's SM time over the driver's last sample period (0-1).",
         [](const ProcessSample& s) -> std::optional<double> {
           if (!s.sm_percent) return std::nullopt;
           return *s.sm_percent / 100.0;
         });
  series("gpuscope_process_memory_utilization_ratio", "gauge",
         "A process's share of the GPU's memory-controller time (0-1).",
         [](const ProcessSample& s) -> std::optional<double> {
           if (!s.memory_percent) return std::nullopt;
           return *s.memory_percent / 100.0;
         });
  if (!left_out.empty()) {
    out +=
        "# HELP gpuscope_processes_not_exported Processes on a GPU beyond --max-processes-per-gpu "
        "(not given series of their own).\n# TYPE gpuscope_processes_not_exported gauge\n";
    for (const auto& [gpu, count] : left_out) {
      fmt::format_to(std::back_inserter(out), "gpuscope_processes_not_exported{{{}}} {}\n", gpu,
                     count);
    }
  }
  return out;
}

}  // namespace gpuscope::exporter
