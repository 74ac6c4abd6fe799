// Read-only access to SQLite files gpuscope did not write (gssr's exports, Nsight Systems
// exports), for the readers of foreign formats in ingest/: tables, columns and rows through
// gpuscope's own types, so that sqlite3.h stays inside store/. SQLite's failures throw
// ForeignSqliteError with SQLite's message; each reader turns it into its format's own Error.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpuscope::store {

class Database;
class Statement;

// A failed SQLite call on a foreign file: SQLite's message ("file is not a database", ...).
class ForeignSqliteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a column of the current row holds, as SQLite stores it (INTEGER, REAL, TEXT, BLOB, NULL;
// a BLOB is Bytes, as store::Blob names the type of a chunk).
enum class ValueType { Integer, Real, Text, Bytes, Null };

// The rows of one query, one at a time.
class ForeignRows {
 public:
  ~ForeignRows();
  ForeignRows(ForeignRows&&) noexcept;
  ForeignRows& operator=(ForeignRows&&) noexcept;

  // Advances; true while a row is available.
  bool next();
  // Binds a parameter (1-based) after reset(), for a statement used again.
  void bind(int index, std::int64_t value);
  void reset();
  ValueType type(int column) const;
  bool is_null(int column) const { return type(column) == ValueType::Null; }
  std::int64_t int64(int column) const;
  double real(int column) const;
  std::string text(int column) const;
  std::optional<std::string> opt_text(int column) const;

 private:
  friend class ForeignDatabase;
  explicit ForeignRows(std::unique_ptr<Statement> statement);
  std::unique_ptr<Statement> statement_;
};

// An SQLite file opened read-only.
class ForeignDatabase {
 public:
  // Opens `path` read-only; throws ForeignSqliteError when SQLite cannot.
  explicit ForeignDatabase(const std::filesystem::path& path);
  ~ForeignDatabase();
  ForeignDatabase(const ForeignDatabase&) = delete;
  ForeignDatabase& operator=(const ForeignDatabase&) = delete;

  // Whether `path` opens as an SQLite database and holds `table` (never throws).
  static bool holds_table(const std::filesystem::path& path, std::string_view table,
                          std::string_view unless = {});

  // The names of its tables and views.
  std::set<std::string> tables() const;
  bool has_table(std::string_view table) const;
  // The table's column names (empty when there is no such table).
  std::set<std::string> columns(std::string_view table) const;
  // Prepares `sql`; throws ForeignSqliteError when SQLite refuses it.
  ForeignRows query(const std::string& sql) const;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::unique_ptr<Database> db_;
};

}  // namespace gpuscope::store
