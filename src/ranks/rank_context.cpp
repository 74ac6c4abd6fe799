#include "ranks/rank_context.hpp"

#include <charconv>

namespace gpuscope::ranks {
namespace {

std::optional<int> as_int(const std::optional<std::string>& text) {
  if (!text || text->empty()) return std::nullopt;
  int value = 0;
  const char* end = text->data() + text->size();
  auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end || value < 0) return std::nullopt;
  return value;
}

std::optional<std::string> non_empty(std::optional<std::string> text) {
  if (text && text->empty()) return std::nullopt;
  return text;
}

// One launcher's variables: its name and the variables of each field (empty: it has none).
struct LauncherVariables {
  const char* launcher;
  const char* rank;
  const char* world_size;
  const char* local_rank;
  const char* local_world_size;
  const char* job_id;
};

// The MPI-style launchers, innermost first (torchrun is handled before them).
constexpr LauncherVariables kMpiLaunchers[] = {
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_MCA_ess_base_jobid"},
    {"mvapich", "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_LOCAL_RANK",
     "MV2_COMM_WORLD_LOCAL_SIZE", ""},
    {"pmi", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", ""},
    {"pmix", "PMIX_RANK", "", "", "", "PMIX_NAMESPACE"},
};

std::optional<std::string> lookup(const EnvLookup& env, const char* name) {
  if (name == nullptr || *name == '\0') return std::nullopt;
  return non_empty(env(name));
}

// A rank context from one launcher's variables; nullopt when its rank variable is unset or bad.
std::optional<RankContext> from_launcher(const EnvLookup& env, const LauncherVariables& v) {
  auto rank = as_int(lookup(env, v.rank));
  if (!rank) return std::nullopt;
  RankContext context;
  context.launcher = v.launcher;
  context.rank = rank;
  context.world_size = as_int(lookup(env, v.world_size));
  context.local_rank = as_int(lookup(env, v.local_rank));
  context.local_world_size = as_int(lookup(env, v.local_world_size));
  context.job_id = lookup(env, v.job_id);
  if (!context.job_id && std::string_view(v.launcher) == "openmpi") {
    context.job_id = lookup(env, "PMIX_NAMESPACE");
  }
  return context;
}

std::optional<RankContext> from_torch(const EnvLookup& env) {
  auto rank = as_int(lookup(env, "RANK"));
  auto world_size = as_int(lookup(env, "WORLD_SIZE"));
  if (!rank || !world_size || *rank >= *world_size) return std::nullopt;
  RankContext context;
  context.rank = rank;
  context.world_size = world_size;
  context.local_rank = as_int(lookup(env, "LOCAL_RANK"));
  context.local_world_size = as_int(lookup(env, "LOCAL_WORLD_SIZE"));
  context.job_id = lookup(env, "TORCHELASTIC_RUN_ID");
  context.launcher = context.job_id ? "torchrun" : "torch";
  // torchrun's default rendezvous id is the word "none": no id at all.
  if (context.job_id == "none") context.job_id.reset();
  return context;
}

RankContext from_slurm(const SlurmContext& slurm) {
  RankContext context;
  context.launcher = "slurm";
  context.job_id = slurm.job_id;
  context.rank = slurm.rank;
  context.world_size = slurm.ntasks;
  context.local_rank = slurm.local_rank;
  return context;
}

}  // namespace

SlurmContext read_slurm_context(const EnvLookup& env) {
  SlurmContext context;
  context.job_id = non_empty(env("SLURM_JOB_ID"));
  if (!context.job_id) return context;
  context.step_id = non_empty(env("SLURM_STEP_ID"));
  context.rank = as_int(env("SLURM_PROCID"));
  context.local_rank = as_int(env("SLURM_LOCALID"));
  context.node_id = as_int(env("SLURM_NODEID"));
  context.node_name = non_empty(env("SLURMD_NODENAME"));
  context.ntasks = as_int(env("SLURM_NTASKS"));
  context.step_gpus = non_empty(env("SLURM_STEP_GPUS"));
  if (!context.step_gpus) context.step_gpus = non_empty(env("SLURM_JOB_GPUS"));
  return context;
}

RankContext read_rank_context(const EnvLookup& env) {
  const SlurmContext slurm = read_slurm_context(env);
  std::optional<RankContext> found = from_torch(env);
  for (const auto& launcher : kMpiLaunchers) {
    if (found) break;
    found = from_launcher(env, launcher);
    // PMI_RANK and PMIX_RANK are also what srun --mpi=pmi2/pmix sets in the tasks it starts
    // itself: when they repeat SLURM's rank and size, the context is SLURM's, which knows more.
    // (Open MPI's and MVAPICH2's variables come only from their own mpirun.)
    const std::string_view name = launcher.launcher;
    if (found && (name == "pmi" || name == "pmix") && slurm.active() && found->rank == slurm.rank &&
        (!found->world_size || found->world_size == slurm.ntasks)) {
      found.reset();
    }
  }
  RankContext context;
  if (found) {
    context = *found;
    if (!context.job_id) context.job_id = slurm.job_id;
  } else if (slurm.active()) {
    context = from_slurm(slurm);
  } else if (auto index = as_int(lookup(env, "JOB_COMPLETION_INDEX"))) {
    context.launcher = "kubernetes";
    context.rank = index;
  }
  context.node_name = slurm.node_name;
  const bool in_pod = lookup(env, "KUBERNETES_SERVICE_HOST").has_value();
  if (!context.node_name && in_pod) context.node_name = lookup(env, "NODE_NAME");
  context.pod_name = lookup(env, "POD_NAME");
  if (!context.pod_name && in_pod) context.pod_name = lookup(env, "HOSTNAME");
  context.pod_namespace = lookup(env, "POD_NAMESPACE");
  return context;
}

std::optional<VisibleGpus> visible_gpus(const EnvLookup& env) {
  // CUDA_VISIBLE_DEVICES set to "" means "no GPU", which is different from unset.
  if (auto cuda = env("CUDA_VISIBLE_DEVICES")) return VisibleGpus{*cuda, "CUDA_VISIBLE_DEVICES"};
  for (const char* name : {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS"}) {
    if (auto gpus = non_empty(env(name))) return VisibleGpus{*gpus, name};
  }
  return std::nullopt;
}

}  // namespace gpuscope::ranks
