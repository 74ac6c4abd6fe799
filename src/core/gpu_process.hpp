// The processes seen on the GPUs while a run was profiled: who each one was (resolved once, when
// first seen) and what it held on each GPU at each look. Plain data between app/ (which samples
// and resolves them), store/ (the processes and process_samples tables) and analyze/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpuscope {

// One process, as /proc and its cgroup said when it was first seen (docs/processes.md). Every
// field but pid and the first-seen times may be absent: a process that vanished before it was
// looked at, a /proc entry gpuscope may not read, a cgroup path of an unknown shape.
struct GpuProcess {
  unsigned pid = 0;
  std::optional<std::uint64_t> start_ticks;  // /proc/PID/stat field 22: tells a reused pid apart
  std::int64_t first_wall_ns = 0;
  std::int64_t first_mono_ns = 0;
  std::optional<std::string> command;       // /proc/PID/comm
  std::optional<std::string> command_line;  // /proc/PID/cmdline, at most 512 bytes
  std::optional<unsigned> uid;
  std::optional<std::string> user;
  std::optional<unsigned> ppid;
  std::optional<std::string> cgroup;             // the cgroup path the fields below came from
  std::optional<std::string> container_id;       // docker, podman, containerd, CRI-O
  std::optional<std::string> container_runtime;  // "docker", "podman", "containerd", "cri-o", ...
  std::optional<std::string> pod_uid;            // Kubernetes
  std::optional<std::string> pod_name;           // from the process's environment, when it says
  std::optional<std::string> pod_namespace;
  std::optional<std::string> slurm_job_id;
  std::optional<std::string> slurm_step;
  std::optional<std::string> launcher;  // the process's own rank context (its environment)
  std::optional<int> rank;
  std::optional<int> local_rank;
  // Whether it belongs to the profiled job: the job's process or a descendant, or the same
  // SLURM job or launcher job as gpuscope. Absent where there is no job (serve, monitor).
  std::optional<bool> in_job;
};

// What one process held on one GPU at one look (NVML's running processes, and the per-process
// utilization where the driver gives it).
struct ProcessSample {
  unsigned device_index = 0;
  std::int64_t wall_ns = 0;
  std::int64_t mono_ns = 0;
  unsigned pid = 0;
  std::optional<std::uint64_t> used_memory_bytes;  // absent: the driver would not say
  std::optional<double> sm_percent;                // per-process SM utilization
  std::optional<double> memory_percent;            // per-process memory-controller utilization
};

}  // namespace gpuscope
