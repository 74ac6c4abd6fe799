#include "store/health_tables.hpp"

#include <fmt/format.h>

#include <cmath>

#include "store/sqlite.hpp"

namespace gpuscope::store {
namespace {

constexpr std::size_t kLeadingColumns = 3;  // device_index, wall_ns, mono_ns

// The health catalog's values are whole numbers held as doubles: bound as integers so SQLite
// stores them as such. A value an integer cannot hold (not expected) is kept as REAL rather
// than wrapped; NaN binds as NULL.
void bind_whole(Statement& stmt, int index, double value) {
  if (std::isfinite(value) && std::fabs(value) < 9.2e18) {
    stmt.bind(index, static_cast<std::int64_t>(std::llround(value)));
  } else {
    stmt.bind(index, value);
  }
}

}  // namespace

std::span<const Column> health_columns() {
  static const std::vector<Column> columns = [] {
    std::vector<Column> out = {{"device_index", "INTEGER NOT NULL"},
                               {"wall_ns", "INTEGER NOT NULL"},
                               {"mono_ns", "INTEGER NOT NULL"}};
    for (const auto& m : kHealthMetrics) out.push_back({m.name, "INTEGER"});
    return out;
  }();
  return columns;
}

std::string create_health_tables_sql() {
  std::string sql =
      "CREATE TABLE health_samples (\n  run_id INTEGER NOT NULL REFERENCES runs (run_id)";
  for (const auto& c : health_columns()) sql += fmt::format(",\n  {} {}", c.name, c.declaration);
  sql +=
      "\n);\nCREATE INDEX health_samples_by_device ON health_samples (run_id, device_index, "
      "mono_ns);\n";
  return sql;
}

std::string insert_health_sql() {
  return "INSERT INTO health_samples (run_id, " + column_names(health_columns()) + ") VALUES (" +
         placeholders(health_columns().size() + 1) + ")";
}

void bind_health(Statement& insert, std::int64_t run_id, const HealthRow& row) {
  insert.bind(1, run_id);
  insert.bind(2, std::int64_t{row.device_index});
  insert.bind(3, row.wall_ns);
  insert.bind(4, row.mono_ns);
  for (std::size_t i = 0; i < kHealthMetricCount; ++i) {
    // Parameters: run_id, device_index, wall_ns, mono_ns, then the catalog's.
    const int index = 5 + static_cast<int>(i);
    if (row.present.test(i)) {
      bind_whole(insert, index, row.values[i]);
    } else {
      insert.bind_null(index);
    }
  }
}

std::vector<HealthRow> read_health_samples(Database& db, std::int64_t run_id) {
  std::vector<HealthRow> out;
  if (!has_table(db, "health_samples")) return out;
  Statement stmt = db.prepare("SELECT " + select_list(db, "health_samples", health_columns()) +
                              " FROM health_samples WHERE run_id = ? ORDER BY device_index, "
                              "mono_ns, rowid");
  stmt.bind(1, run_id);
  while (stmt.step()) {
    HealthRow row;
    row.device_index = static_cast<unsigned>(stmt.int64(0));
    row.wall_ns = stmt.int64(1);
    row.mono_ns = stmt.int64(2);
    for (std::size_t i = 0; i < kHealthMetricCount; ++i) {
      const int column = static_cast<int>(kLeadingColumns + i);
      if (!stmt.is_null(column)) row.set(kHealthMetrics[i].id, stmt.real(column));
    }
    out.push_back(row);
  }
  return out;
}

std::int64_t count_health_samples(Database& db, std::int64_t run_id, std::string_view schema) {
  if (!has_table(db, "health_samples", schema)) return 0;
  Statement stmt =
      db.prepare(fmt::format("SELECT count(*) FROM {}.health_samples WHERE run_id = ?", schema));
  stmt.bind(1, run_id);
  return stmt.step() ? stmt.int64(0) : 0;
}

}  // namespace gpuscope::store
