// The run database's schema (version 1): one list of columns per table from which the DDL, the
// writer's INSERTs, the reader's SELECTs and merge's copies are all built, so they cannot drift.
// docs/database.md describes every table for people.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "store/sqlite.hpp"

namespace gpuscope::store {

// PRAGMA application_id of every gpuscope run database: "GPUS" in ASCII, so `file(1)` and
// gpuscope can tell a run database from any other SQLite file.
inline constexpr std::int32_t kApplicationId = 0x47505553;
// PRAGMA user_version: the schema this gpuscope writes and the newest it reads.
inline constexpr int kSchemaVersion = 1;
// The oldest schema this gpuscope reads (older files are migrated by migrate()).
inline constexpr int kOldestReadableSchema = 1;

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
// samples: device_index, wall_ns, mono_ns, then one column per metric of kMetrics.
const std::vector<Column>& sample_columns();

// "a, b, c" (with `prefix` before each name, e.g. "src.").
std::string column_names(std::span<const Column> columns, std::string_view prefix = {});
// "?, ?, ?" with one placeholder per column plus `extra`.
std::string placeholders(std::size_t count);

// Creates every table, index and the metric catalog, sets application_id, user_version and the
// meta rows. Runs in one transaction on an empty database.
void create_schema(Database& db, std::string_view created_by);

// Checks that `path` holds a gpuscope run database this gpuscope can read and returns its
// schema version; throws Error::usage saying what the file is instead (missing, not SQLite,
// another application's database, written by a newer gpuscope).
int check_run_database(Database& db, const std::filesystem::path& path);

// Upgrades a writable database from `from_version` to kSchemaVersion, one step per version.
// Version 1 is the first schema, so there is nothing to do yet: this is where a step
// "1 → 2" goes when schema 2 exists (add columns with defaults, never drop data).
void migrate(Database& db, int from_version);

}  // namespace gpuscope::store
