// Which processes used each GPU, from a run's processes and process_samples tables: per process
// and GPU, when it was seen, its peak memory and mean SM share; and the diagnosis of processes
// outside the profiled job on its GPUs (someone else on "your" GPU). Pure functions, no database.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analyze/analysis.hpp"
#include "core/gpu_process.hpp"

namespace gpuscope::analyze {

// A run's processes and process samples, as the reader gives them, with the run's identity.
struct RunProcesses {
  std::int64_t run_id = 0;
  std::string where;  // "nid0012 rank 3 " for a merged analysis, "" for one run
  std::vector<GpuProcess> processes;
  std::vector<ProcessSample> samples;
};

// One ProcessUse per (run, GPU, process) seen, by GPU, then first seen. `seconds` places a
// sample's mono_ns on the analysis' time axis (NaN: off the axis, skipped). A sample whose pid
// has no processes row still counts (with only its pid).
std::vector<ProcessUse> summarise_processes(const RunProcesses& run,
                                            const std::function<double(std::int64_t)>& seconds);

// "GPU 1 was also used by 2 processes outside this job: …" (kind "foreign_process"), one per
// GPU that had any; nothing when in_job is unknown (no job: serve, monitor).
std::vector<Finding> process_findings(const std::vector<ProcessUse>& uses);

// "python (pid 4242, user bob, podman 1a2b3c4d5e6f)": who a process was, for people.
std::string describe(const GpuProcess& process);

// Its workload in words: "podman 1a2b3c4d5e6f", "pod ml/train-0", "SLURM job 42.0", "rank 3",
// those known, in that order; empty when none is.
std::vector<std::string> workload_parts(const GpuProcess& process);

}  // namespace gpuscope::analyze
