#include "support/older_schema.hpp"

#include <sqlite3.h>

#include <stdexcept>

namespace gpuscope::testing {

void downgrade_schema(const std::string& path, const OlderSchema& older) {
  std::string sql;
  for (const auto& table : older.tables) sql += "DROP TABLE " + table + ";";
  for (const auto& [table, column] : older.columns) {
    sql += "ALTER TABLE " + table + " DROP COLUMN " + column + ";";
  }
  sql += older.minor ? "UPDATE meta SET value = '" + std::to_string(*older.minor) +
                           "' WHERE key = 'schema_minor_version';"
                     : std::string("DELETE FROM meta WHERE key = 'schema_minor_version';");
  sql += "VACUUM";
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    const std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    throw std::runtime_error("cannot open " + path + ": " + message);
  }
  char* error = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string message = error ? error : "unknown error";
    sqlite3_free(error);
    sqlite3_close(db);
    throw std::runtime_error("cannot downgrade " + path + ": " + message);
  }
  sqlite3_close(db);
}

}  // namespace gpuscope::testing
