#include "store/sqlite.hpp"

#include <mutex>
#include <string>
#include <system_error>
#include <utility>

namespace gpuscope::store {

struct StepBudget {
  std::filesystem::path file;  // empty: no bound (no progress handler is set either)
  std::uint64_t calls = 0;     // progress-handler calls in this step
  std::uint64_t allowed = 0;   // calls allowed, from the file's size when last read
  bool exceeded = false;       // the last step was stopped for its work

  void start() {
    calls = 0;
    exceeded = false;
  }
  std::string why() const {
    return "a step of a query was stopped after " + std::to_string(calls / 1000) +
           " million operations, more than a file of this size ever needs (a view of endless "
           "work, or a damaged file)";
  }
};

namespace {

constexpr int kOpsPerCall = 1000;  // SQLite calls the progress handler every this many operations
constexpr std::uint64_t kStepBaseOps = 200'000'000;
constexpr std::uint64_t kStepOpsPerPage = 100'000;

std::uint64_t allowed_calls(const std::filesystem::path& file) {
  std::uint64_t bytes = 0;
  for (const auto& part : {file, std::filesystem::path(file.string() + "-wal")}) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(part, ec);
    if (!ec) bytes += size;
  }
  return (kStepBaseOps + kStepOpsPerPage * (bytes / 4096)) / kOpsPerCall;
}

int on_progress(void* data) {
  auto& budget = *static_cast<StepBudget*>(data);
  if (++budget.calls <= budget.allowed) return 0;
  budget.allowed = allowed_calls(budget.file);  // read again: the file may have grown
  if (budget.calls <= budget.allowed) return 0;
  budget.exceeded = true;
  return 1;  // sqlite3_step returns SQLITE_INTERRUPT
}

}  // namespace

namespace {

// Before SQLite's first use in the process: no memory statistics. With them (SQLite's default)
// every allocation SQLite makes takes one process-wide mutex, for figures gpuscope never reads;
// the analysis' two reading threads then wait on each other (docs/performance.md).
void configure_sqlite_once() {
  static std::once_flag once;
  std::call_once(once, [] { sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
}

}  // namespace

Database::Database(const std::filesystem::path& path, int flags)
    : budget_(std::make_unique<StepBudget>()) {
  configure_sqlite_once();
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
  budget_->start();
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    std::string text = budget_->exceeded    ? budget_->why()
                       : message != nullptr ? message
                                            : sqlite3_errstr(rc);
    sqlite3_free(message);
    throw SqliteError(rc, text);
  }
}

Statement Database::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  check(sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                           &stmt, nullptr));
  return Statement(db_, stmt, budget_.get());
}

std::optional<std::int64_t> Database::query_int(const std::string& sql) {
  Statement stmt = prepare(sql);
  if (!stmt.step() || stmt.is_null(0)) return std::nullopt;
  return stmt.int64(0);
}

std::int64_t Database::last_insert_rowid() const {
  return sqlite3_last_insert_rowid(db_);
}

void Database::limit_steps(const std::filesystem::path& file) {
  budget_->file = file;
  budget_->allowed = allowed_calls(file);
  sqlite3_progress_handler(db_, kOpsPerCall, on_progress, budget_.get());
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
    : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)), budget_(other.budget_) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    if (stmt_ != nullptr) sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
    budget_ = other.budget_;
  }
  return *this;
}

int Statement::parameter(std::string_view name) const {
  const std::string key = ":" + std::string(name);
  return sqlite3_bind_parameter_index(stmt_, key.c_str());
}

bool Statement::step() {
  if (budget_ != nullptr) budget_->start();
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  // step's own code is precise (SQLITE_FULL, SQLITE_BUSY); reset returns the same one.
  std::string message =
      budget_ != nullptr && budget_->exceeded ? budget_->why() : std::string(sqlite3_errmsg(db_));
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
