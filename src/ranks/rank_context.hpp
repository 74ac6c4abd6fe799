// Which rank of which parallel job this process is, under any launcher, read from the
// environment the launcher gives its tasks (docs/launchers.md); and which GPUs it may use.
#pragma once

#include <optional>
#include <string>

#include "core/run.hpp"
#include "util/environment.hpp"

namespace gpuscope::ranks {

// The environment as a value (util/environment.hpp), so tests inject their own.
using util::EnvLookup;
using util::process_environment;

// The SLURM context of this task (job, step, rank, local rank, node, ...). Empty when
// SLURM_JOB_ID is unset; malformed numbers are ignored rather than guessed.
SlurmContext read_slurm_context(const EnvLookup& env);

// The rank context, launcher by launcher, innermost first (the launcher that started this
// process sets its own variables last, on top of those of the launchers around it):
//   1. torchrun / torch.distributed: RANK and WORLD_SIZE (both, RANK alone is too common a name),
//      LOCAL_RANK, LOCAL_WORLD_SIZE, TORCHELASTIC_RUN_ID ("torchrun"; "torch" without it);
//   2. Open MPI: OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE, job OMPI_MCA_ess_base_jobid
//      or PMIX_NAMESPACE;
//   3. MVAPICH2: MV2_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE;
//   4. MPICH/Hydra and Intel MPI: PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS ("pmi");
//   5. PMIx (prterun, srun --mpi=pmix): PMIX_RANK, job PMIX_NAMESPACE;
//   6. SLURM: SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_JOB_ID (as read_slurm_context);
//   7. Kubernetes: an Indexed Job's JOB_COMPLETION_INDEX.
// PMI_RANK/PMIX_RANK equal to SLURM_PROCID (and PMI_SIZE to SLURM_NTASKS) means srun started the
// task itself (srun --mpi=pmi2/pmix): the context is SLURM's, which knows more. Missing fields stay
// absent; the job id falls back to SLURM_JOB_ID; pod name, namespace and node come from the
// Kubernetes downward API's conventional variables (POD_NAME, POD_NAMESPACE, NODE_NAME; HOSTNAME in
// a pod) whatever the launcher.
RankContext read_rank_context(const EnvLookup& env);

// Which GPUs the job may use, as the scheduler or CUDA says: CUDA_VISIBLE_DEVICES if set, else
// SLURM_STEP_GPUS, else SLURM_JOB_GPUS; nullopt when none of them is set. `source` names it.
struct VisibleGpus {
  std::string list;    // e.g. "0,1" or "GPU-8f2c...,GPU-1a3b..."
  std::string source;  // "CUDA_VISIBLE_DEVICES", "SLURM_STEP_GPUS" or "SLURM_JOB_GPUS"
};
std::optional<VisibleGpus> visible_gpus(const EnvLookup& env);

}  // namespace gpuscope::ranks
