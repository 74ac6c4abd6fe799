// What a profiled run is made of: its metadata, the devices it sampled, and the rows the sampler
// produces. Plain data shared by collect/ (producer), store/ (persistence) and analyze/.
#pragma once

#include <bitset>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/device_description.hpp"
#include "core/event_kinds.hpp"
#include "core/metrics.hpp"

namespace gpuscope {

// The scheduler context of one process (empty when not under SLURM).
struct SlurmContext {
  std::optional<std::string> job_id;
  std::optional<std::string> step_id;
  std::optional<int> rank;               // SLURM_PROCID
  std::optional<int> local_rank;         // SLURM_LOCALID
  std::optional<int> node_id;            // SLURM_NODEID
  std::optional<std::string> node_name;  // SLURMD_NODENAME
  std::optional<int> ntasks;             // SLURM_NTASKS
  std::optional<std::string> step_gpus;  // SLURM_STEP_GPUS / SLURM_JOB_GPUS
  bool active() const { return job_id.has_value(); }
};

// Which rank of which parallel job this process is, whatever started it: srun, mpirun (Open MPI,
// MPICH, Intel MPI, MVAPICH2), a PMIx launcher, torchrun, or a Kubernetes Indexed Job
// (ranks/rank_context.hpp reads it; docs/launchers.md says what each launcher gives). Fields a
// launcher does not give, or gives malformed, are absent.
struct RankContext {
  std::optional<std::string> launcher;       // "slurm", "openmpi", "mvapich", "pmi", "pmix",
                                             // "torchrun", "torch", "kubernetes"; absent: none
  std::optional<std::string> job_id;         // the launcher's name for the job (SLURM_JOB_ID,
                                             // PMIX_NAMESPACE, TORCHELASTIC_RUN_ID, ...)
  std::optional<int> rank;                   // 0 .. world_size-1
  std::optional<int> local_rank;             // rank among this node's tasks
  std::optional<int> world_size;             // tasks in the job
  std::optional<int> local_world_size;       // tasks of the job on this node
  std::optional<std::string> node_name;      // SLURMD_NODENAME, or the pod's NODE_NAME
  std::optional<std::string> pod_name;       // Kubernetes: POD_NAME, else HOSTNAME in a pod
  std::optional<std::string> pod_namespace;  // Kubernetes: POD_NAMESPACE
  bool active() const { return launcher.has_value(); }
};

// How the run ended.
enum class RunStatus {
  Running,     // still going, or gpuscope died before recording the end (kill -9, crash)
  Finished,    // the job exited (any exit code)
  Signaled,    // the job was killed by a signal
  TimedOut,    // stopped by --max-runtime
  NotStarted,  // the command could not be executed (not found, not executable)
};

struct RunInfo {
  std::vector<std::string> command;  // argv of the wrapped job (["bash", "-c", "..."] for --wrap)
  std::string label;
  std::string host;
  std::string user;
  std::int64_t start_wall_ns = 0;  // CLOCK_REALTIME at start
  std::int64_t start_mono_ns = 0;  // CLOCK_MONOTONIC at start
  std::string tool_version;
  std::int64_t sampling_interval_ns = 0;
  std::int64_t power_sampling_interval_ns = 0;  // 0: power only at the main cadence
  std::optional<std::string> scenario;          // set for --simulate runs
  std::optional<std::string> driver_version;
  std::optional<std::string> cuda_visible_devices;
  // Where the samples came from when gpuscope did not take them itself: "Prometheus at URL,
  // gpuscope serve's series, 15 s scrape", "gssr profile folder". Absent for runs gpuscope
  // profiled; analyze and the report show it.
  std::optional<std::string> origin;
  SlurmContext slurm;
  RankContext ranks;
};

struct RunEnd {
  RunStatus status = RunStatus::Finished;
  std::int64_t end_wall_ns = 0;
  std::int64_t end_mono_ns = 0;
  std::optional<int> exit_code;    // as a shell reports it (128 + signal when signaled)
  std::optional<int> term_signal;  // the signal that ended the job, if any
  std::int64_t samples_taken = 0;
  std::int64_t deadlines_missed = 0;
  std::vector<std::string> problems;  // failures met while profiling, said plainly
};

// One row per GPU per tick: every metric of the catalog, present or not (missing is not zero).
struct SampleRow {
  unsigned device_index = 0;  // NVML index
  std::int64_t wall_ns = 0;
  std::int64_t mono_ns = 0;
  std::array<double, kMetricCount> values{};
  std::bitset<kMetricCount> present;

  void set(Metric metric, double value) {
    values[static_cast<std::size_t>(metric)] = value;
    present.set(static_cast<std::size_t>(metric));
  }
  std::optional<double> get(Metric metric) const {
    const auto i = static_cast<std::size_t>(metric);
    return present.test(i) ? std::optional<double>(values[i]) : std::nullopt;
  }
};

// The fast power cadence (--power-sampling-ms): power and the energy counter only.
struct PowerRow {
  unsigned device_index = 0;
  std::int64_t wall_ns = 0;
  std::int64_t mono_ns = 0;
  std::optional<double> power_w;
  std::optional<double> power_instant_w;
  std::optional<double> energy_mj;
};

// Something that happened at a point in time: job start and exit, signals, throttle-reason
// changes, GPU lost, sampling gaps, write failures.
struct Event {
  std::int64_t wall_ns = 0;
  std::int64_t mono_ns = 0;
  std::optional<unsigned> device_index;
  EventKind kind = EventKind::Other;  // core/event_kinds.hpp
  std::string detail;                 // words for people
};

enum class OutputStream { Stdout, Stderr };

struct OutputLine {
  std::int64_t wall_ns = 0;
  std::int64_t mono_ns = 0;
  OutputStream stream = OutputStream::Stdout;
  std::string text;
};

}  // namespace gpuscope
