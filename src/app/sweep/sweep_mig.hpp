// The sweep on GPUs in MIG mode: a power limit or a locked clock applies to the whole GPU, so a
// sweep goes ahead on a GPU in MIG mode only when every instance on it is the job's and no other
// user's process runs on it (sweep/mig_guard.hpp; docs/sweep.md).
#pragma once

#include <vector>

#include "collect/gpu_selection.hpp"
#include "collect/node_gpus.hpp"
#include "core/device_description.hpp"

namespace gpuscope::app {

// Throws Error::usage, saying why, when a selected GPU in MIG mode is shared with someone else;
// prints a note for a GPU in MIG mode that is all the job's.
void check_mig_gpus(const collect::NodeGpus& node, const collect::GpuSelection& selection,
                    const std::vector<DeviceDescription>& devices);

}  // namespace gpuscope::app
