// The sweep tables of a sweep database (docs/database.md, "Sweep tables"): the sweep's settings,
// its plan, each trial with its measurements and run, the per-setting summaries, the
// recommendations and the restore record. The trials' runs are ordinary runs of the same file.
#pragma once

#include <filesystem>
#include <optional>

#include "core/sweep.hpp"

namespace gpuscope::store {

// Creates (or replaces) the sweep tables in the run database at `path` and fills them from
// `record`, in one transaction. Throws Error naming the file when it cannot.
void write_sweep_tables(const std::filesystem::path& path, const sweep::SweepRecord& record);

// The sweep in the run database at `path`: its settings, plan, trials, recommendations and
// restore record (the per-setting summaries are left to sweep::summarize, which made them);
// nullopt when the file has no sweep tables (an ordinary run database). Throws Error naming the
// file when it cannot be read.
std::optional<sweep::SweepRecord> read_sweep_tables(const std::filesystem::path& path);

}  // namespace gpuscope::store
