// What gpuscope's own SQLite files share when they are opened: the schema version each records
// in its meta table, and a new file created empty with its mode before SQLite opens it (so the
// mode is the one asked for, whatever the umask).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "store/sqlite.hpp"

namespace gpuscope::store {

// The version `db` records under `key` in its meta table; nullopt when it has none (another
// program's file).
std::optional<std::int64_t> meta_version(Database& db, const std::string& key);

// Creates `path` empty with `mode` (it must not exist). Throws SqliteError(SQLITE_CANTOPEN)
// with the system's reason.
void create_empty_file(const std::filesystem::path& path, mode_t mode);

}  // namespace gpuscope::store
