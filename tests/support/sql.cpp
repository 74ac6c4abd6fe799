#include "support/sql.hpp"

#include <sqlite3.h>

#include <stdexcept>

namespace gpuscope::testing {

std::vector<SqlRow> query(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    throw std::runtime_error("cannot open " + path + ": " + message);
  }
  sqlite3_busy_timeout(db, 5000);
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
    std::string message = sqlite3_errmsg(db);
    sqlite3_close(db);
    throw std::runtime_error("bad SQL '" + sql + "': " + message);
  }
  std::vector<SqlRow> rows;
  int rc = 0;
  while ((rc = sqlite3_step(statement)) == SQLITE_ROW) {
    SqlRow row;
    for (int i = 0; i < sqlite3_column_count(statement); ++i) {
      if (sqlite3_column_type(statement, i) == SQLITE_NULL) {
        row.emplace_back(std::nullopt);
      } else {
        row.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(statement, i)));
      }
    }
    rows.push_back(std::move(row));
  }
  const bool failed = rc != SQLITE_DONE;
  std::string message = failed ? sqlite3_errmsg(db) : "";
  sqlite3_finalize(statement);
  sqlite3_close(db);
  if (failed) throw std::runtime_error("query '" + sql + "' failed: " + message);
  return rows;
}

std::optional<std::string> scalar(const std::string& path, const std::string& sql) {
  auto rows = query(path, sql);
  if (rows.empty() || rows[0].empty()) return std::nullopt;
  return rows[0][0];
}

double number(const std::string& path, const std::string& sql) {
  auto value = scalar(path, sql);
  return value ? std::stod(*value) : 0.0;
}

}  // namespace gpuscope::testing

namespace gpuscope::testing {

void run_sql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    throw std::runtime_error("cannot open " + path + ": " + message);
  }
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  const std::string message = error != nullptr ? error : "";
  sqlite3_free(error);
  sqlite3_close(db);
  if (rc != SQLITE_OK) throw std::runtime_error("SQL '" + sql + "' failed: " + message);
}

}  // namespace gpuscope::testing
