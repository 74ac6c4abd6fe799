#include "slurm/environment.hpp"

#include <charconv>
#include <cstdlib>

namespace gpuscope::slurm {
namespace {

std::optional<int> as_int(const std::optional<std::string>& text) {
  if (!text || text->empty()) return std::nullopt;
  int value = 0;
  const char* end = text->data() + text->size();
  auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::optional<std::string> non_empty(std::optional<std::string> text) {
  if (text && text->empty()) return std::nullopt;
  return text;
}

}  // namespace

SlurmContext read_context(const EnvLookup& env) {
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

std::optional<VisibleGpus> visible_gpus(const EnvLookup& env) {
  // CUDA_VISIBLE_DEVICES set to "" means "no GPU", which is different from unset.
  if (auto cuda = env("CUDA_VISIBLE_DEVICES")) return VisibleGpus{*cuda, "CUDA_VISIBLE_DEVICES"};
  for (const char* name : {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS"}) {
    if (auto gpus = non_empty(env(name))) return VisibleGpus{*gpus, name};
  }
  return std::nullopt;
}

}  // namespace gpuscope::slurm
