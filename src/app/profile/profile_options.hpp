// Options of `gpuscope profile`, and their checks before anything starts.
#pragma once

#include <string>
#include <vector>

#include "app/profile/push.hpp"
#include "collect/backend.hpp"

namespace gpuscope::app {

struct ProfileOptions {
  collect::BackendOptions backend;
  std::vector<std::string> command;  // after --
  std::string wrap;                  // --wrap "CMD ARGS"
  std::string output;                // -o: file, directory or pattern
  bool force = false;
  double sampling_ms = 100;
  double power_sampling_ms = 0;  // 0: power at the main cadence only
  double energy_counter_ms = 0;  // 0: the energy counter at every sample
  double health_interval_s = 5;  // ECC, remapped rows, PCIe replays...; 0: none
  double max_runtime_s = 0;      // 0: none
  double kill_grace_s = 10;
  std::string label;
  bool verbose = false;
  bool quiet = false;
  std::string gpus;  // --gpus LIST; empty: what the job may see
  bool capture_output = false;
  bool per_node = false;
  double flush_ms = 1000;             // writer commit interval (hidden; tests)
  double process_sampling_ms = 1000;  // which processes use each GPU; 0: never
  bool live = false;                  // --live: the monitor table on stderr
  PushOptions push;                   // --push URL ...
  bool trace_kernels =
      false;                // --trace-kernels: CUPTI kernel/memcpy/memset trace (docs/kernels.md)
  bool trace_nvtx = false;  // --trace-nvtx: NVTX ranges only, as phases (docs/phases.md)
  // Phases (docs/phases.md): --phase NAME=REGEX and --phase-end NAME=REGEX over the job's output
  // lines; --no-marks: no socket for `gpuscope mark` (GPUSCOPE_MARK_SOCKET unset in the job).
  std::vector<std::string> phases;
  std::vector<std::string> phase_ends;
  bool marks = true;
  // The node's CPU and memory energy (docs/node-energy.md), read from these roots (hidden
  // options for tests: made-up trees).
  std::string sysfs_root = "/sys";
  std::string proc_root = "/proc";
};

// Smallest main sampling interval: NVML answers a full sample of an 8-GPU node in a few ms.
inline constexpr double kMinSamplingMs = 10;
// Smallest power interval: NVML refreshes power every 10–100 ms depending on the GPU.
inline constexpr double kMinPowerSamplingMs = 10;

// Throws Error::usage (exit code 2) for options that make no sense, before any job starts.
void validate(const ProfileOptions& options);

}  // namespace gpuscope::app
