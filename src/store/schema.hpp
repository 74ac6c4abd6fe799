// The run database's schema (version 1.10): one list of columns per table from which the DDL, the
// writer's INSERTs, the reader's SELECTs and merge's copies are all built, so they cannot drift.
// docs/database.md describes every table for people.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::store {

class Database;  // store/sqlite.hpp, inside store/ only

// PRAGMA application_id of every gpuscope run database: "GPUS" in ASCII, so `file(1)` and
// gpuscope can tell a run database from any other SQLite file.
inline constexpr std::int32_t kApplicationId = 0x47505553;
// PRAGMA user_version: the schema's major version, the one this gpuscope writes and the newest
// it reads. A new major version is one older readers cannot read.
inline constexpr int kSchemaVersion = 1;
// The oldest schema this gpuscope reads (older files are migrated by migrate()).
inline constexpr int kOldestReadableSchema = 1;
// The minor version (meta row 'schema_minor_version', absent: 0). A minor version only adds what
// older readers of the same major version can ignore, so they keep reading newer files:
// 1.1 added sample_chunks, the columnar copy of samples; 1.2 the kernel trace tables
// (store/kernel_tables.hpp); 1.3 the launcher's rank context in runs and the processes and
// process_samples tables; 1.4 grid_intensity (store/grid_tables.hpp); 1.5 phases
// (store/phase_tables.hpp); 1.6 the saturation source of each device (devices.saturation_*); 1.7
// runs.origin, where imported samples came from; 1.8 health_samples, the GPUs' health counters
// (store/health_tables.hpp); 1.9 MIG: whether a GPU was in MIG mode and, for a MIG device, who it
// is (devices.mig_enabled, parent_index … parent_slices; core/mig.hpp); 1.10 the node's energy:
// node_energy_domains, node_energy_samples and node_cpu_time (store/node_tables.hpp); 1.11 the
// vendor of each device (devices.vendor, vendor_index; docs/amd.md); 1.12 AMD's own metrics as
// samples and sample_chunks columns (umc_activity_pct … amd_throttle_status; their chunk columns
// may be NULL: every row NULL); 1.13 sample_counts, each GPU's row count as the writer left it,
// and the triggers that delete a run's counts when its samples rows change (store/chunk_io.hpp).
inline constexpr int kSchemaMinorVersion = 13;

struct Column {
  std::string_view name;
  std::string_view declaration;  // type and constraints as written in CREATE TABLE
};

// The columns of each table after its leading run_id, in table order.
std::span<const Column> run_columns();
std::span<const Column> device_columns();
std::span<const Column> power_columns();
std::span<const Column> event_columns();
std::span<const Column> output_columns();
// 1.3: the processes seen on the GPUs (one row per process) and what each held at each look.
std::span<const Column> process_columns();
std::span<const Column> process_sample_columns();
std::string create_process_tables_sql();
// Whether `table` exists in the database (or an attached one, `schema`).
bool has_table(Database& db, std::string_view table, std::string_view schema = "main");
// Whether `table` of `schema` has a column `column` (an older file may lack one added since).
bool has_column(Database& db, std::string_view table, std::string_view column,
                std::string_view schema = "main");
// The columns as a SELECT list for `table` of `schema`, with "NULL AS name" for each column the
// file's table lacks (a file written by an older gpuscope, read without upgrading it).
std::string select_list(Database& db, std::string_view table, std::span<const Column> columns,
                        std::string_view schema = "main");
// samples: device_index, wall_ns, mono_ns, then one column per metric of kMetrics.
const std::vector<Column>& sample_columns();
// sample_chunks (1.1): device_index, first_mono_ns, last_mono_ns, row_count, wall_ns, mono_ns,
// then one BLOB per metric of kMetrics (store/sample_chunks.hpp has the encodings).
const std::vector<Column>& chunk_columns();
// The DDL of sample_chunks and its index (create_schema, and migrate() from 1.0).
std::string create_chunks_sql();
// The DDL of sample_counts (1.13): run_id, device_index, row_count, one row per GPU of a run
// whose writer finished it, and the triggers on samples that delete a run's counts when any of
// its rows is inserted, deleted or moved (create_schema, and migrate() from before 1.13).
std::string create_sample_counts_sql();

// "a, b, c" (with `prefix` before each name, e.g. "src.").
std::string column_names(std::span<const Column> columns, std::string_view prefix = {});
// Copies run `old_id`'s rows of `table` from the attached database "src" into main's, as run
// `new_id`, in their stored order (merge); returns how many rows were copied.
std::int64_t copy_run_rows(Database& db, std::string_view table, std::span<const Column> columns,
                           std::int64_t old_id, std::int64_t new_id);
// "?, ?, ?" with one placeholder per column plus `extra`.
std::string placeholders(std::size_t count);

// Creates every table, index and the metric catalog, sets application_id, user_version and the
// meta rows. Runs in one transaction on an empty database.
void create_schema(Database& db, std::string_view created_by);

// Checks that `path` holds a gpuscope run database this gpuscope can read and returns its
// schema version; throws Error::usage saying what the file is instead (missing, not SQLite,
// another application's database, written by a newer gpuscope).
int check_run_database(Database& db, const std::filesystem::path& path);

// Upgrades a writable database from `from_version` to kSchemaVersion, one step per version, then
// to kSchemaMinorVersion (1.0 → 1.1 adds an empty sample_chunks: readers use rows for all of it;
// 1.1 → 1.2 adds the empty kernel trace tables; 1.2 → 1.3 the rank columns of runs, NULL in the
// runs already there, and the empty process tables; 1.3 → 1.4 the empty grid_intensity; 1.4 → 1.5
// the empty phases; 1.5 → 1.6 and 1.6 → 1.7 columns at the end of devices and runs; 1.7 → 1.8
// the empty health_samples; 1.8 → 1.9 the MIG columns at the end of devices, NULL in the rows
// already there; 1.9 → 1.10 the empty node energy tables; 1.10 → 1.11 the vendor columns at the
// end of devices, NULL (NVIDIA) in the rows already there; 1.11 → 1.12 the AMD metric columns at
// the end of samples and sample_chunks, NULL in the rows already there; 1.12 → 1.13 the empty
// sample_counts: readers count the rows of runs written before).
// Steps only add tables or columns, never drop data.
void migrate(Database& db, int from_version);

// The minor version of an open run database (0 for a 1.0 file, which has no such meta row).
int schema_minor_version(Database& db, std::string_view schema = "main");
// Whether the database (or an attached one, `schema`) has the sample_chunks table.
bool has_sample_chunks(Database& db, std::string_view schema = "main");

}  // namespace gpuscope::store
