// The sim's definitions of NVML's opaque handle types: the loader only ever sees pointers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sim/levels.hpp"

// A device handle is the address of one of these inside the driver's device table.
struct nvmlDevice_st {
  std::size_t index = 0;
};

// A GPM sample: what nvmlGpmSampleGet snapshots, for nvmlGpmMetricsGet to difference.
struct nvmlGpmSample_st {
  bool taken = false;
  std::size_t device = 0;
  std::uint64_t generation = 0;  // which nvmlInit the device belonged to
  std::int64_t time_ns = 0;      // scenario time of the snapshot
  gpuscope::sim::Levels integral{};
};
