// Where a task's run database goes: one file per rank under srun, named by a pattern.
#pragma once

#include <filesystem>
#include <string>

#include "core/run.hpp"

namespace gpuscope::slurm {

struct OutputNaming {
  std::string host;       // short host name of this machine
  std::string timestamp;  // "20261122-134501", used for the default name outside SLURM
  SlurmContext slurm;
  bool per_node = false;  // --per-node: one sampling task per node, so %h alone is distinct
};

// Expands the -o argument:
//  - empty: under SLURM "gpuscope-<job>.<step>/<host>.rank<r>.db", else
//    "gpuscope-<host>-<timestamp>.db";
//  - an existing directory or a path ending in '/': "<dir>/<host>.rank<r>.db" under SLURM, else
//    "<dir>/gpuscope-<host>-<timestamp>.db";
//  - otherwise a pattern where %j is the job id, %s the step, %r the rank, %h the host,
//    %t the timestamp and %% a percent sign.
// Throws Error::usage for an unknown %-sequence, or when several ranks would write one file
// (SLURM with more than one task and a pattern without %r, or without %h under --per-node).
std::filesystem::path expand_output_path(const std::string& argument, const OutputNaming& naming);

}  // namespace gpuscope::slurm
