#include "store/foreign_sqlite.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include "store/sqlite.hpp"

namespace gpuscope::store {
namespace {

// Runs `f`, turning SQLite's failure into the foreign file's error type.
template <typename F>
auto translated(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const SqliteError& e) {
    throw ForeignSqliteError(e.what());
  }
}

std::string quote_identifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

}  // namespace

ForeignRows::ForeignRows(std::unique_ptr<Statement> statement) : statement_(std::move(statement)) {}
ForeignRows::~ForeignRows() = default;
ForeignRows::ForeignRows(ForeignRows&&) noexcept = default;
ForeignRows& ForeignRows::operator=(ForeignRows&&) noexcept = default;

bool ForeignRows::next() {
  return translated([&] { return statement_->step(); });
}

void ForeignRows::bind(int index, std::int64_t value) {
  statement_->bind(index, value);
}
void ForeignRows::reset() {
  statement_->reset();
}

ValueType ForeignRows::type(int column) const {
  switch (statement_->type(column)) {
    case SQLITE_INTEGER:
      return ValueType::Integer;
    case SQLITE_FLOAT:
      return ValueType::Real;
    case SQLITE_TEXT:
      return ValueType::Text;
    case SQLITE_BLOB:
      return ValueType::Bytes;
    default:
      return ValueType::Null;
  }
}

std::int64_t ForeignRows::int64(int column) const {
  return statement_->int64(column);
}
double ForeignRows::real(int column) const {
  return statement_->real(column);
}
std::string ForeignRows::text(int column) const {
  return statement_->text(column);
}
std::optional<std::string> ForeignRows::opt_text(int column) const {
  return statement_->opt_text(column);
}

ForeignDatabase::ForeignDatabase(const std::filesystem::path& path) : path_(path) {
  translated([&] {
    db_ = std::make_unique<Database>(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
    db_->limit_steps(path);  // a view of endless work stops, with the reason, instead
  });
}

ForeignDatabase::~ForeignDatabase() = default;

bool ForeignDatabase::holds_table(const std::filesystem::path& path, std::string_view table,
                                  std::string_view unless) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return false;
  try {
    const ForeignDatabase db(path);
    return db.has_table(table) && (unless.empty() || !db.has_table(unless));
  } catch (const std::exception&) {
    return false;
  }
}

std::set<std::string> ForeignDatabase::tables() const {
  std::set<std::string> names;
  ForeignRows rows = query("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')");
  while (rows.next()) names.insert(rows.text(0));
  return names;
}

bool ForeignDatabase::has_table(std::string_view table) const {
  ForeignRows rows = query(fmt::format(
      "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = {}", sql_quote(table)));
  return rows.next();
}

std::set<std::string> ForeignDatabase::columns(std::string_view table) const {
  std::set<std::string> names;
  ForeignRows rows = query("PRAGMA main.table_info(" + quote_identifier(table) + ")");
  while (rows.next()) names.insert(rows.text(1));
  return names;
}

ForeignRows ForeignDatabase::query(const std::string& sql) const {
  return translated([&] { return ForeignRows(std::make_unique<Statement>(db_->prepare(sql))); });
}

}  // namespace gpuscope::store
