// Whether a sweep may change the settings of a GPU in MIG mode. A power limit or a locked clock
// applies to the whole GPU: on a GPU split among several users' jobs it would slow theirs too.
// A sweep goes ahead on a GPU in MIG mode only when every instance on it is the job's
// (docs/sweep.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpuscope::sweep {

// One MIG instance of the GPU, and who has it.
struct MigInstanceUse {
  unsigned gpu_instance_id = 0;
  std::string profile;    // "1g.10gb"; empty when unknown
  bool selected = false;  // the job may use it (--gpus, CUDA_VISIBLE_DEVICES, or its whole GPU)
  std::vector<std::string> other_users;  // users other than the sweep's with processes on it
};

struct MigGpuUse {
  unsigned gpu = 0;  // NVML index
  bool mig_enabled = false;
  std::vector<MigInstanceUse> instances;  // the live instances
};

// Why the sweep must not change this GPU's settings, or nullopt when it may: a GPU not in MIG
// mode; one in MIG mode whose every instance the job holds with no one else's process on it.
std::optional<std::string> mig_refusal(const MigGpuUse& gpu);

}  // namespace gpuscope::sweep
