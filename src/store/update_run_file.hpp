// Adding to a run database that is already there (the grid intensity analyze fetched, the phases
// of a trace): one transaction, the schema upgraded first, the WAL folded back into the file.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

namespace gpuscope::store {

class Database;

// Opens the existing run database `path` for writing (upgrading an older schema first) and runs
// `write(db)` in one IMMEDIATE transaction, then folds the WAL into the file: all of it or, on
// failure, nothing. A SQLite failure becomes Error("cannot <what> in <path>", SQLite's words).
void update_run_file(const std::filesystem::path& path, const std::string& what,
                     const std::function<void(Database&)>& write);

}  // namespace gpuscope::store
