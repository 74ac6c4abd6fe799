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
#include "util/environment.hpp"

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
  // Under a launcher that starts one rank per GPU (as many ranks on the node as GPUs selected,
  // each using the GPU of its local rank: CUDA's convention for torchrun and mpirun), keeps only
  // the GPU of `local_rank` and its MIG devices. False, unchanged, when the counts differ.
  bool keep_local_rank_gpu(std::size_t local_rank, std::size_t local_ranks);
};

// The description of the device with row index `index` among `devices` (a GPU or a MIG device,
// as collect::describe_system lists them); throws std::out_of_range when there is none.
const DeviceDescription& device_at(const std::vector<DeviceDescription>& devices, unsigned index);

// The number of GPUs in a description list: the GPUs (NVIDIA's, then AMD's) come first, the
// MIG devices after them.
std::size_t gpu_count(const std::vector<DeviceDescription>& devices);

// Finds the parent GPU's NVML index of a MIG device UUID ("MIG-..."), if the driver knows it.
using MigResolver = std::function<std::optional<unsigned>(const std::string& mig_uuid)>;

// (collect/node_gpus.hpp has the resolver over the node's GPUs.)

// Resolves a comma-separated list of indices (NVML's; AMD GPUs after them, docs/amd.md), GPU
// UUIDs ("GPU-...", unique prefixes accepted as CUDA does; an AMD GPU's UUID), MIG device UUIDs,
// or "all". An empty list, "-1" or "NoDevFiles"
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

// What ROCm lets the job see of the AMD GPUs: ROCR_VISIBLE_DEVICES (indices in the library's
// order, or UUIDs), then HIP_VISIBLE_DEVICES (indices into what ROCR_VISIBLE_DEVICES leaves;
// HIP reads CUDA_VISIBLE_DEVICES when it is unset, hip_source names which).
struct AmdVisibleLists {
  std::optional<std::string> rocr;
  std::optional<std::string> hip;
  std::string hip_source = "HIP_VISIBLE_DEVICES";
};

// The AMD GPUs among `devices` that `lists` leave visible, as ROCm applies them (every AMD GPU
// when neither is set). An index beyond those visible selects them all, with a note; an entry
// that is no AMD GPU is Error::usage.
GpuSelection select_amd_visible(const AmdVisibleLists& lists,
                                const std::vector<DeviceDescription>& devices);

// The GPUs a job's environment leaves it on a node with AMD GPUs, where it sets ROCm's variables
// (ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, or CUDA_VISIBLE_DEVICES, which HIP reads when the
// node has no NVIDIA GPU): the AMD GPUs they leave, and the NVIDIA GPUs CUDA_VISIBLE_DEVICES
// leaves (all of them without it). nullopt on a node without AMD GPUs, or when none is set.
std::optional<GpuSelection> amd_visible(const util::EnvLookup& env,
                                        const std::vector<DeviceDescription>& devices);

}  // namespace gpuscope::collect
