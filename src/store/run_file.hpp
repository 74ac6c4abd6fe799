// Creating, closing and opening run database files: the checks on the path, the connection
// settings, and the errors a person sees when a file is not what it should be.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/device_description.hpp"
#include "core/run.hpp"
namespace gpuscope::store {

class Database;  // store/sqlite.hpp, inside store/ only

struct CreatedRun {
  std::unique_ptr<Database> db;
  std::int64_t run_id = 0;
};

// Checks a database output (core/output_check.hpp: only a regular file is replaced, and only
// with `overwrite`; never one of `inputs`; not standard output; missing folders are created)
// and returns the file to write (a link's target). Throws Error::usage otherwise.
std::filesystem::path check_output_path(const std::filesystem::path& path, bool overwrite,
                                        const std::vector<std::filesystem::path>& inputs = {});

// check_output_path, then removes the old file and its -wal/-shm when overwriting.
void prepare_output_path(const std::filesystem::path& path, bool overwrite);

// Opens a new, empty database at a prepared path with the writer's settings (WAL,
// synchronous=NORMAL) and the schema. Throws Error naming the file on failure.
std::unique_ptr<Database> create_database(const std::filesystem::path& path);

// A complete run database without runs at `path` (replaced when it exists): a sweep whose trials
// never ran still leaves its database.
void create_empty_run_file(const std::filesystem::path& path);

// prepare_output_path + create_database + the run row and its devices.
CreatedRun create_run_file(const std::filesystem::path& path, bool overwrite, const RunInfo& run,
                           const std::vector<DeviceDescription>& devices);

// Folds the WAL into the main file and leaves the file in rollback-journal mode, so the .db
// alone is complete and readable from read-only media. Returns a problem in words, if any.
std::optional<std::string> close_run_file(Database& db, const std::filesystem::path& path);

// Opens an existing run database read-only (a writer may still be adding rows) and checks it
// is one this gpuscope reads; throws Error::usage saying what is wrong otherwise.
std::unique_ptr<Database> open_run_database(const std::filesystem::path& path,
                                            int* schema_version = nullptr);

}  // namespace gpuscope::store
