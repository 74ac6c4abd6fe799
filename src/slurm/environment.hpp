// Everything gpuscope knows about SLURM: reading a task's context from its environment.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "core/run.hpp"
#include "util/environment.hpp"

namespace gpuscope::slurm {

// The environment as a value (util/environment.hpp), so tests inject their own.
using util::EnvLookup;
using util::process_environment;

// The SLURM context of this task (job, step, rank, local rank, node, ...). Empty when
// SLURM_JOB_ID is unset; malformed numbers are ignored rather than guessed.
SlurmContext read_context(const EnvLookup& env);

// Which GPUs the job may use, as the scheduler or CUDA says: CUDA_VISIBLE_DEVICES if set, else
// SLURM_STEP_GPUS, else SLURM_JOB_GPUS; nullopt when none of them is set. `source` names it.
struct VisibleGpus {
  std::string list;    // e.g. "0,1" or "GPU-8f2c...,GPU-1a3b..."
  std::string source;  // "CUDA_VISIBLE_DEVICES", "SLURM_STEP_GPUS" or "SLURM_JOB_GPUS"
};
std::optional<VisibleGpus> visible_gpus(const EnvLookup& env);

}  // namespace gpuscope::slurm
