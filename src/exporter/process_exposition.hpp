// The processes on the GPUs as Prometheus series (docs/live.md, "Processes"): memory and
// utilization per process, and the workload labels (pod, namespace, container, SLURM job) that
// `serve` puts on each GPU's series, as dcgm-exporter's pod mapping and Princeton jobstats' SLURM
// mapping do, read from /proc and the cgroups instead of the kubelet or slurmctld.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/gpu_process.hpp"
#include "exporter/metric_names.hpp"

namespace gpuscope::exporter {

// The latest look at the GPUs' processes: each process on each GPU, with who it is.
using ProcessesNow = std::vector<std::pair<ProcessSample, GpuProcess>>;
using LabelList = std::vector<std::pair<std::string, std::string>>;

// What `serve --process-series` shows of the processes (docs/live.md, "What it reveals"):
//  Full: per-process series with every label, user and command included;
//  Safe: per-process series without user and command (and jobstats' userid left empty);
//  Off:  no per-process series, and nothing of the user either; the GPUs' workload labels (pod,
//        namespace, container, SLURM job) stay, as they say which workload uses a GPU.
enum class ProcessSeries { Off, Safe, Full };

// "off", "safe", "full"; nullopt for anything else.
std::optional<ProcessSeries> process_series_from_text(std::string_view text);
std::string_view process_series_text(ProcessSeries series);

// The default: Full on a loopback listener (only this machine reads it), Safe otherwise.
inline ProcessSeries default_process_series(bool loopback_listener) {
  return loopback_listener ? ProcessSeries::Full : ProcessSeries::Safe;
}

// `processes` with what `series` does not show removed: under Safe and Off, each process's user,
// uid, command and command line. Every label and series made from the result follows the policy.
ProcessesNow reveal(ProcessesNow processes, ProcessSeries series);

// How many processes per GPU get series of their own under `series`: none under Off.
inline std::size_t processes_shown(ProcessSeries series, std::size_t max_per_gpu) {
  return series == ProcessSeries::Off ? 0 : max_per_gpu;
}

// Per GPU, the labels of the workload using it: that of the process holding the most memory
// among those with a known workload (pod, namespace, container; slurm_job_id, or
// dcgm-exporter's hpc_job with dcgm naming). A GPU without such a process has none. With
// jobstats naming: `jobid` and `userid` (the uid, empty when unknown) of the process holding the
// most memory among those in a SLURM job.
std::map<unsigned, LabelList> workload_labels(const ProcessesNow& processes, Naming naming);

// The per-process series: gpuscope_process_memory_used_bytes and
// gpuscope_process_sm_utilization_ratio / _memory_utilization_ratio, labelled with the GPU's
// labels (`gpu_labels` gives them for a device index, without braces; empty: not served) plus
// pid, command, user, container, pod, namespace and slurm_job_id. At most `max_per_gpu`
// processes per GPU (those holding the most memory), so a fork storm cannot explode the label
// set; the number left out is a series of its own. `max_per_gpu` 0: nothing at all, not even that
// count (`--process-series off`).
std::string render_processes(const ProcessesNow& processes,
                             const std::function<std::string(unsigned)>& gpu_labels,
                             std::size_t max_per_gpu);

}  // namespace gpuscope::exporter
