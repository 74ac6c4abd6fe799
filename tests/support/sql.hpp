// Reads a run database with plain SQLite, independently of gpuscope's own reader, so black-box
// tests check the file a user (or pandas) would open.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpuscope::testing {

using SqlRow = std::vector<std::optional<std::string>>;  // NULL is nullopt

// All rows of `sql` on the database at `path` (opened read-only). Throws on SQL errors.
std::vector<SqlRow> query(const std::string& path, const std::string& sql);

// The first column of the first row, nullopt for NULL or no row.
std::optional<std::string> scalar(const std::string& path, const std::string& sql);

// Runs `sql` (statements that change it) on the database at `path`. Throws on SQL errors.
void run_sql(const std::string& path, const std::string& sql);

// scalar() as a number (0 when NULL or absent, which tests assert against explicitly).
double number(const std::string& path, const std::string& sql);

}  // namespace gpuscope::testing
