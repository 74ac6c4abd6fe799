#include "store/grid_tables.hpp"

#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store/sqlite_errors.hpp"
#include "store/update_run_file.hpp"

namespace gpuscope::store {

std::string create_grid_tables_sql() {
  return "CREATE TABLE grid_intensity (\n"
         "  request TEXT NOT NULL,\n"
         "  source TEXT NOT NULL,\n"
         "  region TEXT,\n"
         "  kind TEXT NOT NULL,\n"
         "  start_wall_ns INTEGER NOT NULL,\n"
         "  end_wall_ns INTEGER NOT NULL,\n"
         "  g_per_kwh REAL NOT NULL,\n"
         "  fetched_wall_ns INTEGER NOT NULL\n"
         ");\n"
         "CREATE INDEX grid_intensity_by_request ON grid_intensity (request, start_wall_ns);\n";
}

std::optional<IntensitySeries> load_grid_series(const std::filesystem::path& path,
                                                const std::string& request) {
  try {
    Database db(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
    if (!has_table(db, "grid_intensity")) return std::nullopt;
    Statement stmt = db.prepare(
        "SELECT source, region, kind, start_wall_ns, end_wall_ns, g_per_kwh FROM grid_intensity "
        "WHERE request = ? ORDER BY start_wall_ns");
    stmt.bind(1, request);
    IntensitySeries series;
    while (stmt.step()) {
      series.source = stmt.text(0);
      series.region = stmt.opt_text(1).value_or("");
      series.periods.push_back(
          {stmt.int64(3), stmt.int64(4), stmt.real(5), IntensityKind::parse(stmt.text(2))});
    }
    if (series.periods.empty()) return std::nullopt;
    return series;
  } catch (const SqliteError&) {
    return std::nullopt;  // unreadable: the caller fetches again
  }
}

void save_grid_series(const std::filesystem::path& path, const std::string& request,
                      const IntensitySeries& series, std::int64_t fetched_wall_ns) {
  update_run_file(path, "store the grid intensity", [&](Database& db) {
    Statement erase = db.prepare("DELETE FROM grid_intensity WHERE request = ?");
    erase.bind(1, request);
    erase.run();
    Statement insert = db.prepare(
        "INSERT INTO grid_intensity (request, source, region, kind, start_wall_ns, "
        "end_wall_ns, g_per_kwh, fetched_wall_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    for (const auto& p : series.periods) {
      insert.bind(1, request);
      insert.bind(2, series.source);
      insert.bind(3, series.region);
      insert.bind(4, std::string(p.kind.text()));  // the stored word, as it always was
      insert.bind(5, p.start_wall_ns);
      insert.bind(6, p.end_wall_ns);
      insert.bind(7, p.g_per_kwh);
      insert.bind(8, fetched_wall_ns);
      insert.run();
    }
  });
}

}  // namespace gpuscope::store
