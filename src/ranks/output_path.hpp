// Where a task's run database goes: one file per rank under any launcher, named by a pattern.
#pragma once

#include <filesystem>
#include <string>

#include "core/run.hpp"

namespace gpuscope::ranks {

struct OutputNaming {
  std::string host;       // short host name of this machine
  std::string timestamp;  // "20261122-134501", used for the default name outside a job
  SlurmContext slurm;
  RankContext ranks;
  bool per_node = false;  // --per-node: one sampling task per node, so %h alone is distinct
};

// Expands the -o argument:
//  - empty: under SLURM "gpuscope-<job>.<step>/<host>.rank<r>.db"; under another launcher that
//    names its job "gpuscope-<launcher>-<job>/<host>.rank<r>.db"; under a launcher that does not
//    "gpuscope-<host>-<timestamp>.rank<r>.db"; outside any "gpuscope-<host>-<timestamp>.db";
//  - an existing directory or a path ending in '/': "<dir>/<host>.rank<r>.db" under a launcher,
//    else "<dir>/gpuscope-<host>-<timestamp>.db";
//  - otherwise a pattern where %j is the job id, %s the SLURM step, %r the rank, %l the local
//    rank, %h the host, %t the timestamp, %p gpuscope's process id and %% a percent sign.
// So the default names of a job's ranks never collide, on one node or many. Throws Error::usage
// for an unknown %-sequence, or when several ranks would write one file (more than one task and
// a pattern without %r or %p, or without %h under --per-node).
std::filesystem::path expand_output_path(const std::string& argument, const OutputNaming& naming);

}  // namespace gpuscope::ranks
