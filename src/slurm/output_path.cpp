#include "slurm/output_path.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace gpuscope::slurm {
namespace {

std::string rank_text(const SlurmContext& slurm) {
  return slurm.rank ? std::to_string(*slurm.rank) : "0";
}

std::string per_rank_file(const OutputNaming& naming) {
  if (naming.slurm.active())
    return fmt::format("{}.rank{}.db", naming.host, rank_text(naming.slurm));
  return fmt::format("gpuscope-{}-{}.db", naming.host, naming.timestamp);
}

std::string expand_pattern(const std::string& pattern, const OutputNaming& naming) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
      continue;
    }
    if (i + 1 == pattern.size()) {
      throw Error::usage(fmt::format("output pattern '{}' ends with a lone %", pattern), {},
                         "use %% for a percent sign");
    }
    switch (pattern[++i]) {
      case 'j':
        out += naming.slurm.job_id.value_or("nojob");
        break;
      case 's':
        out += naming.slurm.step_id.value_or("nostep");
        break;
      case 'r':
        out += rank_text(naming.slurm);
        break;
      case 'h':
        out += naming.host;
        break;
      case 't':
        out += naming.timestamp;
        break;
      case '%':
        out += '%';
        break;
      default:
        throw Error::usage(fmt::format("unknown %{} in output pattern '{}'", pattern[i], pattern),
                           {}, "use %j (job), %s (step), %r (rank), %h (host), %t (time) or %%");
    }
  }
  return out;
}

}  // namespace

std::filesystem::path expand_output_path(const std::string& argument, const OutputNaming& naming) {
  const SlurmContext& slurm = naming.slurm;
  if (argument.empty()) {
    if (slurm.active()) {
      return std::filesystem::path(
                 fmt::format("gpuscope-{}.{}", *slurm.job_id, slurm.step_id.value_or("0"))) /
             per_rank_file(naming);
    }
    return per_rank_file(naming);
  }
  std::error_code ignored;
  if (argument.back() == '/' || std::filesystem::is_directory(argument, ignored)) {
    return std::filesystem::path(argument) / per_rank_file(naming);
  }
  // Several tasks writing one file would corrupt each other's runs: the pattern must tell the
  // ranks apart (or the nodes, when only one rank per node samples).
  const bool several_tasks = slurm.active() && slurm.ntasks.value_or(1) > 1;
  const bool has_rank = argument.find("%r") != std::string::npos;
  const bool has_host = argument.find("%h") != std::string::npos;
  if (several_tasks && !has_rank && !(naming.per_node && has_host)) {
    throw Error::usage(
        fmt::format("-o {} would make all {} ranks write the same file", argument, *slurm.ntasks),
        {}, "put %r (rank) in the name, e.g. -o run.%r.db, or give a directory");
  }
  return expand_pattern(argument, naming);
}

}  // namespace gpuscope::slurm
