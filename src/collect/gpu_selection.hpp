// Which GPUs a run samples: from --gpus, or from what the job may see (CUDA_VISIBLE_DEVICES,
// SLURM_STEP_GPUS), resolved against the GPUs the driver enumerates.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/device_description.hpp"
#include "core/error.hpp"

namespace gpuscope::collect {

struct GpuSelection {
  std::vector<unsigned> indices;  // NVML indices of GPUs, in the order given, without duplicates
  // The MIG devices sampled too (docs/mig.md): their row indices (core/mig.hpp), each with its
  // parent GPU among `indices`. A GPU selected whole brings all its MIG devices; a MIG UUID
  // brings that one and its parent (for the signals the GPU does not split), not its siblings.
  std::vector<unsigned> instances;
  std::vector<std::string> notes;  // things the user should know ("CUDA_VISIBLE_DEVICES is empty")
  // What sampling `instances` means ("MIG-… is MIG device GPU 0 GI 3 (2g.20gb): …"), for the
  // callers that sample them; a caller that uses `indices` alone leaves these out.
  std::vector<std::string> mig_notes;

  // What a run samples, in order: the GPUs, then the MIG devices.
  std::vector<unsigned> rows() const;
};

// The description of the device with row index `index` among `devices` (a GPU or a MIG device,
// as collect::describe_system lists them); throws std::out_of_range when there is none.
const DeviceDescription& device_at(const std::vector<DeviceDescription>& devices, unsigned index);

// Finds the parent GPU's NVML index of a MIG device UUID ("MIG-..."), if the driver knows it.
using MigResolver = std::function<std::optional<unsigned>(const std::string& mig_uuid)>;

// Resolves a comma-separated list of NVML indices, GPU UUIDs ("GPU-...", unique prefixes
// accepted as CUDA does), MIG device UUIDs, or "all". An empty list, "-1" or "NoDevFiles"
// selects no GPU. `devices` are the GPUs then the MIG devices (collect::describe_system); a MIG
// UUID none of them has is given to `resolve_mig`, whose parent is then sampled whole. Throws
// Error::usage naming the entry that matches no GPU.
GpuSelection select_gpus(std::string_view list, const std::vector<DeviceDescription>& devices,
                         const MigResolver& resolve_mig);

// Like select_gpus for a list that came from the environment (`source` names the variable).
// Integer entries beyond the GPUs this process can see mean the scheduler's indices are global
// while the driver's view is restricted (cgroups): then every visible GPU is selected, with a note.
GpuSelection select_visible_gpus(std::string_view list, std::string_view source,
                                 const std::vector<DeviceDescription>& devices,
                                 const MigResolver& resolve_mig);

}  // namespace gpuscope::collect
