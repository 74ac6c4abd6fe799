// The sim's definitions of NVML's opaque handle types: the loader only ever sees pointers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "nvml/abi.hpp"
#include "sim/levels.hpp"

// A device handle is the address of one of these inside the driver's device table: a GPU's own,
// or one of its MIG devices' (whose index is the parent GPU's). The driver tells them apart by
// address alone, never by reading a handle, so a MIG handle cannot pass for its GPU.
struct nvmlDevice_st {
  std::size_t index = 0;
};

// A GPM sample: what nvmlGpmSampleGet snapshots, for nvmlGpmMetricsGet to difference.
struct nvmlGpmSample_st {
  bool taken = false;
  std::size_t device = 0;
  const void* instance = nullptr;  // the MIG instance sampled; null: the whole GPU
  std::uint64_t generation = 0;    // which nvmlInit the device belonged to
  std::int64_t time_ns = 0;        // scenario time of the snapshot
  gpuscope::sim::Levels integral{};
};

// An event set: the GPUs registered on it with their event masks, and the events queued for
// nvmlEventSetWait (one delivered per call). Like GPM samples it belongs to the caller.
struct nvmlEventSet_st {
  // One nvmlDeviceRegisterEvents call's new types for one GPU. The GPU's events of those types
  // after through_ns are still to be queued: it starts just before the call (NVML records
  // nothing from before it) and moves to each look's time.
  struct Registration {
    std::size_t device = 0;
    std::uint64_t generation = 0;  // which nvmlInit the device belonged to
    unsigned long long mask = 0;
    std::int64_t through_ns = -1;  // scenario time
  };
  std::vector<Registration> registrations;
  std::deque<nvmlEventData_t> queue;
};
