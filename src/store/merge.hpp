// Combines per-rank run databases (each holding one or more runs) into one, for analysing a
// multi-node job as a whole.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "store/write_batch.hpp"

namespace gpuscope::store {

struct MergeSummary {
  std::vector<std::filesystem::path> inputs;  // the files merged, in the order read
  std::int64_t runs = 0;
  RowCounts rows;  // samples, power samples, events, output lines, health samples
                   // and node energy rows copied
};

// Writes every run of `inputs` (files, or directories whose *.db files are all taken) into a
// new database at `output`, renumbering run ids in input order. Throws Error::usage when
// `output` exists and !overwrite, an input is missing, not a run database or of a newer schema,
// or two inputs hold the same run (same host, SLURM job, step and rank, and start time).
// Nothing is left at `output` when it fails.
MergeSummary merge(const std::filesystem::path& output,
                   const std::vector<std::filesystem::path>& inputs, bool overwrite);

// merge() of files the caller gives up (an import's parts, in its private temporary folder):
// the same output, but one part that already is what merge() would write (one run, numbered 1,
// of this schema, its samples all in chunks, nothing merge() leaves out) is moved into place
// (renamed, or copied from another file system) rather than copied row by row; its created_at
// becomes the time of the move, as merge() writes it. The parts may be gone afterwards.
MergeSummary merge_parts(const std::filesystem::path& output,
                         const std::vector<std::filesystem::path>& parts, bool overwrite);

}  // namespace gpuscope::store
