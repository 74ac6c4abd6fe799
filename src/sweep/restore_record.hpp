// The restore record: the GPUs' settings before a sweep changed anything, written (and synced
// to disk) before the first change, so that `gpuscope sweep --restore` can put them back even
// after gpuscope itself was killed. A small JSON file beside the sweep database.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "core/sweep.hpp"

namespace gpuscope::sweep {

// Where the record of a sweep writing `output` lives: "<output>.restore.json".
std::filesystem::path restore_record_path(const std::filesystem::path& output);

// The record as JSON text, and back (throws Error naming `source` when it is not a record).
std::string restore_record_json(const RestoreRecord& record);
RestoreRecord parse_restore_record(const std::string& text, const std::string& source);

// Writes the record atomically (temporary file, fsync, rename, fsync of the folder). Throws
// Error when it cannot: a sweep must not change anything it could not undo.
void write_restore_record(const std::filesystem::path& path, const RestoreRecord& record);

// The record at `path`, or nullopt when there is none; throws Error when it cannot be read.
std::optional<RestoreRecord> read_restore_record(const std::filesystem::path& path);

}  // namespace gpuscope::sweep
