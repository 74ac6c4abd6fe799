#include "ranks/output_path.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "core/error.hpp"

namespace gpuscope::ranks {
namespace {

std::string rank_text(const RankContext& ranks) {
  return ranks.rank ? std::to_string(*ranks.rank) : "0";
}

// A job id or step from the environment as one safe file-name part (PMIx namespaces may hold '/'
// or ':'; no environment variable may move the file out of its directory).
std::string name_part(const std::string& text) {
  std::string out;
  for (char c : text.substr(0, 64)) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_' || c == '.' || c == '@';
    out += safe ? c : '_';
  }
  return out;
}

std::string per_rank_file(const OutputNaming& naming) {
  if (naming.ranks.active())
    return fmt::format("{}.rank{}.db", name_part(naming.host), rank_text(naming.ranks));
  return fmt::format("gpuscope-{}-{}.db", name_part(naming.host), naming.timestamp);
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
        out += name_part(naming.ranks.job_id.value_or(naming.slurm.job_id.value_or("nojob")));
        break;
      case 's':
        out += name_part(naming.slurm.step_id.value_or("nostep"));
        break;
      case 'r':
        out += rank_text(naming.ranks);
        break;
      case 'l':
        out += naming.ranks.local_rank ? std::to_string(*naming.ranks.local_rank) : "0";
        break;
      case 'h':
        out += name_part(naming.host);
        break;
      case 't':
        out += naming.timestamp;
        break;
      case 'p':
        out += std::to_string(::getpid());
        break;
      case '%':
        out += '%';
        break;
      default:
        throw Error::usage(
            fmt::format("unknown %{} in output pattern '{}'", pattern[i], pattern), {},
            "use %j (job), %s (step), %r (rank), %l (local rank), %h (host), %t (time), "
            "%p (process id) or %%");
    }
  }
  return out;
}

}  // namespace

std::filesystem::path expand_output_path(const std::string& argument, const OutputNaming& naming) {
  const SlurmContext& slurm = naming.slurm;
  const RankContext& ranks = naming.ranks;
  if (argument.empty()) {
    if (slurm.active()) {
      return std::filesystem::path(fmt::format("gpuscope-{}.{}", name_part(*slurm.job_id),
                                               name_part(slurm.step_id.value_or("0")))) /
             per_rank_file(naming);
    }
    if (ranks.active() && ranks.job_id) {
      return std::filesystem::path(
                 fmt::format("gpuscope-{}-{}", *ranks.launcher, name_part(*ranks.job_id))) /
             per_rank_file(naming);
    }
    if (ranks.active()) {
      return fmt::format("gpuscope-{}-{}.rank{}.db", name_part(naming.host), naming.timestamp,
                         rank_text(ranks));
    }
    return per_rank_file(naming);
  }
  std::error_code ignored;
  if (argument.back() == '/' || std::filesystem::is_directory(argument, ignored)) {
    return std::filesystem::path(argument) / per_rank_file(naming);
  }
  // Several tasks writing one file would corrupt each other's runs: the pattern must tell the
  // ranks apart (or the nodes, when only one rank per node samples).
  const int tasks = ranks.world_size.value_or(slurm.ntasks.value_or(1));
  const bool several_tasks = ranks.active() && tasks > 1;
  const bool has_rank =
      argument.find("%r") != std::string::npos || argument.find("%p") != std::string::npos;
  const bool has_host = argument.find("%h") != std::string::npos;
  if (several_tasks && !has_rank && !(naming.per_node && has_host)) {
    throw Error::usage(
        fmt::format("-o {} would make all {} ranks write the same file", argument, tasks), {},
        "put %r (rank) in the name, e.g. -o run.%r.db, or give a directory");
  }
  return expand_pattern(argument, naming);
}

}  // namespace gpuscope::ranks
