// Adding to a run database that is already there (the grid intensity analyze fetched, the phases
// of a trace): one transaction, the schema upgraded first, the WAL folded back into the file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/device_description.hpp"

namespace gpuscope::store {

class Database;

// Opens the existing run database `path` for writing (upgrading an older schema first) and runs
// `write(db)` in one IMMEDIATE transaction, then folds the WAL into the file: all of it or, on
// failure, nothing. A SQLite failure becomes Error("cannot <what> in <path>", SQLite's words).
void update_run_file(const std::filesystem::path& path, const std::string& what,
                     const std::function<void(Database&)>& write);

// Adds devices rows for run `run_id` of `path` (a reader that learns its GPUs as it reads:
// ingest's log formats). Throws Error as update_run_file does.
void add_devices(const std::filesystem::path& path, std::int64_t run_id,
                 const std::vector<DeviceDescription>& devices);

}  // namespace gpuscope::store
