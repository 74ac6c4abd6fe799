// Thin RAII wrappers over the SQLite C API: a connection and a prepared statement. The only
// header in gpuscope that includes sqlite3.h; everything outside src/store sees the store's
// own types. SQLite failures throw SqliteError, which the public entry points turn into
// gpuscope::Error with the file name and what to do.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpuscope::store {

// A failed SQLite call: the primary result code and SQLite's message.
class SqliteError : public std::runtime_error {
 public:
  SqliteError(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

class Statement;
struct StepBudget;  // what one step may still do on a connection (Database::limit_steps)

// An open connection, closed on destruction.
class Database {
 public:
  // Opens `path` with sqlite3_open_v2 `flags`; throws SqliteError when SQLite refuses.
  Database(const std::filesystem::path& path, int flags);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Runs one or more statements that return no rows we need.
  void exec(const std::string& sql);
  // Prepares `sql` for repeated use.
  Statement prepare(std::string_view sql);
  // The single integer a query like "PRAGMA user_version" returns (nullopt without a row).
  std::optional<std::int64_t> query_int(const std::string& sql);
  // Rows changed by the last INSERT/UPDATE/DELETE on this connection.
  std::int64_t changes() const { return sqlite3_changes64(db_); }
  // The rowid of the last INSERT on this connection.
  std::int64_t last_insert_rowid() const;
  // Throws SqliteError for a non-OK `rc`, with this connection's message.
  void check(int rc) const;

  // Bounds the work of each step on this connection (Statement::step, exec, query_int) by the
  // size of `file` and its -wal: 2·10⁸ virtual-machine operations plus 10⁵ per 4 KiB page, the
  // size read again when a step reaches its bound (a file a writer still grows earns more). A
  // step past it stops with SqliteError(SQLITE_INTERRUPT) saying so, so no query on a file
  // gpuscope did not write (a view of an endless recursion, a damaged file) runs for ever. For
  // connections that read such files; a second call bounds by another file.
  void limit_steps(const std::filesystem::path& file);

  sqlite3* handle() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
  std::unique_ptr<StepBudget> budget_;
};

// A prepared statement bound by 1-based parameter index (no name lookups on the hot path).
class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt, StepBudget* budget = nullptr)
      : db_(db), stmt_(stmt), budget_(budget) {}
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  void bind_null(int index) { sqlite3_bind_null(stmt_, index); }
  void bind(int index, std::int64_t value) { sqlite3_bind_int64(stmt_, index, value); }
  void bind(int index, double value) { sqlite3_bind_double(stmt_, index, value); }
  // Binds text that must outlive the next step() (SQLITE_STATIC: no copy).
  void bind_static(int index, std::string_view text) {
    sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
  }
  // Binds a copy of `text` (SQLITE_TRANSIENT): safe for temporaries.
  void bind(int index, const std::string& text) {
    sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  // Binds bytes that must outlive the next step() (SQLITE_STATIC: no copy).
  void bind_blob(int index, std::span<const unsigned char> bytes) {
    sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(), SQLITE_STATIC);
  }
  template <typename T>
  void bind(int index, const std::optional<T>& value) {
    if (value) {
      bind_value(index, *value);
    } else {
      bind_null(index);
    }
  }

  // The index of the named parameter ":name" (0 when the statement has none by that name).
  int parameter(std::string_view name) const;

  // Advances; true while a row is available. Throws SqliteError on failure.
  bool step();
  // Runs a statement that returns no rows, then resets it for the next use.
  void run();
  void reset();

  bool is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  // SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB or SQLITE_NULL.
  int type(int column) const { return sqlite3_column_type(stmt_, column); }
  std::int64_t int64(int column) const { return sqlite3_column_int64(stmt_, column); }
  double real(int column) const { return sqlite3_column_double(stmt_, column); }
  std::string text(int column) const;
  // A BLOB column's bytes, valid until the next step() or reset (empty for NULL).
  std::span<const unsigned char> blob(int column) const {
    const auto* data = static_cast<const unsigned char*>(sqlite3_column_blob(stmt_, column));
    const auto size = static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column));
    return data == nullptr ? std::span<const unsigned char>() : std::span(data, size);
  }
  std::optional<std::string> opt_text(int column) const;
  std::optional<std::int64_t> opt_int64(int column) const;
  std::optional<double> opt_real(int column) const;

 private:
  void bind_value(int index, const std::string& v) { bind(index, v); }
  void bind_value(int index, double v) { bind(index, v); }
  void bind_value(int index, int v) { bind(index, std::int64_t{v}); }
  void bind_value(int index, unsigned v) { bind(index, std::int64_t{v}); }
  void bind_value(int index, std::uint64_t v) { bind(index, static_cast<std::int64_t>(v)); }
  void bind_value(int index, std::int64_t v) { bind(index, v); }

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  StepBudget* budget_ = nullptr;  // its connection's, restarted at each step
};

// Deletes a database file and its -wal, -shm and -journal companions; missing ones are fine.
void remove_database_files(const std::filesystem::path& path);
// Deletes only the companions: a stale -wal next to a new file would be replayed into it.
void remove_companion_files(const std::filesystem::path& path);

// Quotes `name` as an SQL string literal ('it''s').
std::string sql_quote(std::string_view text);

}  // namespace gpuscope::store
