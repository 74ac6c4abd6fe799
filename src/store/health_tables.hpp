// The health_samples table of a run database (schema 1.8; docs/database.md, "health_samples"):
// one row per GPU per look at its health counters (core/health.hpp), a column per entry of
// kHealthMetrics. Rows are rare (one per GPU every few seconds), so they are plain rows with no
// columnar copy; written through the RunWriter, copied by merge, read by RunReader.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/health.hpp"
#include "store/schema.hpp"

namespace gpuscope::store {

class Database;
class Statement;

// The columns after the leading run_id: device_index, wall_ns, mono_ns, then one INTEGER per
// entry of kHealthMetrics, named by its name, in catalog order (NULL: not reported).
std::span<const Column> health_columns();
// The DDL of the table and its index (create_schema, and migrate() from 1.7).
std::string create_health_tables_sql();
// The INSERT statement's text for one row of (run_id, health_columns()).
std::string insert_health_sql();
// Binds `row` as run `run_id`'s row to that INSERT: every present value as an integer (NULL for
// an absent one, never 0).
void bind_health(Statement& insert, std::int64_t run_id, const HealthRow& row);

// Run `run_id`'s health rows by device, then time. None for a file without the table (an older
// schema); a column the file's table lacks reads as absent.
std::vector<HealthRow> read_health_samples(Database& db, std::int64_t run_id);
// The number of health rows of `schema`'s run `run_id` (0 without the table).
std::int64_t count_health_samples(Database& db, std::int64_t run_id,
                                  std::string_view schema = "main");

}  // namespace gpuscope::store
