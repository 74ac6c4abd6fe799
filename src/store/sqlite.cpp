#include "store/sqlite.hpp"

#include <utility>

namespace gpuscope::store {

Database::Database(const std::filesystem::path& path, int flags) {
  const int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    // sqlite3_open_v2 hands back a handle even on failure so the message can be read.
    std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw SqliteError(rc, message);
  }
  sqlite3_extended_result_codes(db_, 0);
}

Database::~Database() {
  // close_v2 defers the close until the last statement is finalized, so order does not matter.
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

void Database::exec(const std::string& sql) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    std::string text = message != nullptr ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    throw SqliteError(rc, text);
  }
}

Statement Database::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  check(sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                           &stmt, nullptr));
  return Statement(db_, stmt);
}

std::optional<std::int64_t> Database::query_int(const std::string& sql) {
  Statement stmt = prepare(sql);
  if (!stmt.step() || stmt.is_null(0)) return std::nullopt;
  return stmt.int64(0);
}

std::int64_t Database::last_insert_rowid() const {
  return sqlite3_last_insert_rowid(db_);
}

void Database::check(int rc) const {
  if (rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW) return;
  std::string message = sqlite3_errmsg(db_);
  if (message == "not an error") message = sqlite3_errstr(rc);
  throw SqliteError(rc, message);
}

Statement::~Statement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    if (stmt_ != nullptr) sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
  }
  return *this;
}

int Statement::parameter(std::string_view name) const {
  const std::string key = ":" + std::string(name);
  return sqlite3_bind_parameter_index(stmt_, key.c_str());
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  // step's own code is precise (SQLITE_FULL, SQLITE_BUSY); reset returns the same one.
  std::string message = sqlite3_errmsg(db_);
  sqlite3_reset(stmt_);
  throw SqliteError(rc, message);
}

void Statement::run() {
  step();
  reset();
}

void Statement::reset() {
  // Bindings are kept: every caller rebinds all parameters before the next step.
  sqlite3_reset(stmt_);
}

std::string Statement::text(int column) const {
  const auto* p = sqlite3_column_text(stmt_, column);
  const int n = sqlite3_column_bytes(stmt_, column);
  if (p == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
}

std::optional<std::string> Statement::opt_text(int column) const {
  if (is_null(column)) return std::nullopt;
  return text(column);
}

std::optional<std::int64_t> Statement::opt_int64(int column) const {
  if (is_null(column)) return std::nullopt;
  return int64(column);
}

std::optional<double> Statement::opt_real(int column) const {
  if (is_null(column)) return std::nullopt;
  return real(column);
}

void remove_database_files(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
  remove_companion_files(path);
}

void remove_companion_files(const std::filesystem::path& path) {
  std::error_code ec;
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    std::filesystem::remove(path.string() + suffix, ec);
  }
}

std::string sql_quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    out += c;
    if (c == '\'') out += '\'';
  }
  out += '\'';
  return out;
}

}  // namespace gpuscope::store
