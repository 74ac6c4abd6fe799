// What `monitor` and `serve` share: the GPUs to watch, opened and probed, and how they stop.
#pragma once

#include <signal.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "collect/backend.hpp"
#include "collect/gpu_reader.hpp"
#include "collect/node_gpus.hpp"
#include "exporter/gpu_identity.hpp"

namespace gpuscope::app {

struct LiveGpus {
  // The libraries of both vendors and the node's devices (node.system; collect/node_gpus.hpp).
  collect::NodeGpus node;
  collect::GpuReaders readers;                    // move into a Sampler that dies before this
  std::vector<exporter::GpuIdentity> identities;  // each GPU followed by its MIG devices
  std::size_t gpu_count = 0;                      // the GPUs among them
};

// Opens the backend and the GPUs of `gpus_list` ("" or "all": every GPU) to be sampled every
// `interval`, printing on stderr what the user should know (where the saturation metrics come
// from, unsupported metric groups). Throws Error.
// With `mig_devices`, the MIG devices of the GPUs selected are watched too, each after its GPU
// (docs/mig.md); without, GPUs only.
LiveGpus open_live_gpus(const collect::BackendOptions& backend, const std::string& gpus_list,
                        std::chrono::nanoseconds interval, bool mig_devices = false);

// The sampling interval option of `monitor` and `serve`: checked against the sampler's floor.
std::chrono::nanoseconds sampling_interval(double interval_ms, const char* option);

// Blocks SIGINT, SIGTERM and SIGHUP for the process's lifetime of this object, so that they can be
// waited for instead of killing gpuscope mid-write. Create it before any thread.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  // Waits up to `timeout` for a stop signal; true when one came.
  bool wait(std::chrono::nanoseconds timeout);

 private:
  sigset_t set_{};
  sigset_t previous_{};
};

}  // namespace gpuscope::app
