// The phases table of a run database (schema 1.5; docs/database.md, "phases"): one row per
// phase instance (NVTX range, marked phase, output-defined phase), written while the job runs
// (marks, output phases: through the RunWriter) or when it ends (NVTX ranges, from the trace),
// copied by merge, read by analyze, report and the Perfetto export.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/phase.hpp"
#include "store/schema.hpp"

namespace gpuscope::store {

class Database;
class Statement;

// The columns after the leading run_id.
std::span<const Column> phase_columns();
// The DDL of the table and its index (create_schema, and migrate() from 1.4).
std::string create_phase_tables_sql();
// Binds `phase` as run `run_id`'s row to an INSERT of (run_id, phase_columns()).
void bind_phase(Statement& insert, std::int64_t run_id, const Phase& phase);
// The INSERT statement's text for one row.
std::string insert_phase_sql();

// Run `run_id`'s phases in start order (then end, longest first: an enclosing phase before
// what it encloses). None for a file without the table (an older schema).
std::vector<Phase> read_phases(Database& db, std::int64_t run_id);
// The same, one at a time (a million phases need not all be held as Phase objects).
void for_each_phase(Database& db, std::int64_t run_id, const std::function<void(Phase&&)>& fn);
std::vector<Phase> read_phases(const std::filesystem::path& path, std::int64_t run_id);
// The number of run `run_id`'s phases (0 without the table).
std::int64_t count_phases(Database& db, std::int64_t run_id);

// Appends `phases` to run `run_id` of the run database `path` in one transaction (upgrading an
// older file's schema first). Throws Error naming the file when it cannot.
void append_phases(const std::filesystem::path& path, std::int64_t run_id,
                   std::span<const Phase> phases);

}  // namespace gpuscope::store
