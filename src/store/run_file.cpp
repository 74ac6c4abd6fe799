#include "store/run_file.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "core/error.hpp"
#include "core/output_check.hpp"
#include "core/version.hpp"
#include "store/run_rows.hpp"
#include "store/schema.hpp"
#include "store/sqlite_errors.hpp"
#include "util/output_file.hpp"

namespace gpuscope::store {
namespace fs = std::filesystem;

namespace {

// A reader waits this long for a writer's checkpoint instead of failing with "database is
// locked"; WAL readers otherwise never wait for the writer.
constexpr int kBusyTimeoutMs = 5000;

}  // namespace

fs::path check_output_path(const fs::path& path, bool overwrite,
                           const std::vector<fs::path>& inputs) {
  OutputCheck check;
  check.force = overwrite;
  check.inputs = inputs;
  if (util::is_stdout_name(path)) {
    throw Error::usage(path.string() + " cannot be a run database",
                       "a SQLite database is a file, not a stream", "name a file with -o/--output");
  }
  return check_output_file(path, check);
}

void prepare_output_path(const fs::path& path, bool overwrite) {
  // Only a regular file is ever replaced (a device, a FIFO, a directory is refused); through a
  // link, the file it points to is replaced and the link stays.
  const fs::path target = check_output_path(path, overwrite);
  std::error_code ec;
  if (fs::exists(target, ec)) {
    fs::remove(target, ec);
    if (ec)
      throw Error("cannot replace " + target.string(), ec.message(),
                  "remove it or choose another -o");
  }
  // An orphaned -wal (left by a killed writer whose .db was deleted) would otherwise be
  // replayed into the new file.
  remove_companion_files(path);
  if (target != path) remove_companion_files(target);
}

std::unique_ptr<Database> create_database(const fs::path& path) {
  return translate_sqlite_errors(
      "cannot create " + path.string(), "check the disk and the -o path", [&] {
        auto db = std::make_unique<Database>(
            path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
        // WAL: readers see committed rows while we write, and a crash leaves committed
        // transactions intact. synchronous=NORMAL: durable against process crashes (kill -9);
        // only a power loss can lose the last transactions, never corrupt the file.
        db->exec(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -16384; "
            "PRAGMA temp_store = MEMORY;");
        create_schema(*db, std::string("gpuscope ") + kVersion);
        return db;
      });
}

CreatedRun create_run_file(const fs::path& path, bool overwrite, const RunInfo& run,
                           const std::vector<DeviceDescription>& devices) {
  prepare_output_path(path, overwrite);
  CreatedRun out;
  out.db = create_database(path);
  translate_sqlite_errors("cannot write the run to " + path.string(), "check the disk", [&] {
    out.db->exec("BEGIN");
    out.run_id = insert_run(*out.db, run);
    insert_devices(*out.db, out.run_id, devices);
    out.db->exec("COMMIT");
  });
  return out;
}

std::optional<std::string> close_run_file(Database& db, const fs::path& path) {
  try {
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    // Leaving WAL needs exclusive access; with a reader still attached SQLite keeps WAL mode
    // and the WAL is folded in when the last connection closes, which is just as complete.
    db.exec("PRAGMA journal_mode = DELETE");
  } catch (const SqliteError& e) {
    if (e.code() == SQLITE_BUSY || e.code() == SQLITE_LOCKED) return std::nullopt;
    return "the write-ahead log could not be merged into " + path.string() + " (" + e.what() +
           "); keep " + path.string() + "-wal next to it";
  }
  return std::nullopt;
}

std::unique_ptr<Database> open_run_database(const fs::path& path, int* schema_version) {
  const std::string name = path.string();
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status)) {
    throw Error::usage(name + " does not exist", "", "check the path of the run database");
  }
  if (fs::is_directory(status)) {
    throw Error::usage(name + " is a directory", "", "give the run database file");
  }
  // SQLite would wait for a FIFO's writer for ever; a device is never a run database.
  if (!fs::is_regular_file(status)) {
    throw Error::usage(name + " is not a regular file", "a FIFO, a device or a socket",
                       "give the run database file gpuscope profile wrote (-o)");
  }
  std::unique_ptr<Database> db;
  try {
    db = std::make_unique<Database>(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
    sqlite3_busy_timeout(db->handle(), kBusyTimeoutMs);
    db->limit_steps(path);  // no query on a file of someone's making runs for ever
  } catch (const SqliteError& e) {
    throw Error::usage("cannot open " + name, e.what(), "check the file's permissions");
  }
  const int version = check_run_database(*db, path);
  if (schema_version != nullptr) *schema_version = version;
  return db;
}

void create_empty_run_file(const std::filesystem::path& path) {
  prepare_output_path(path, true);
  auto db = create_database(path);
  if (auto problem = close_run_file(*db, path)) {
    throw Error(fmt::format("cannot finish {}", path.string()), *problem);
  }
}

}  // namespace gpuscope::store
