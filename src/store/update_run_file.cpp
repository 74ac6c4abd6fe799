#include "store/update_run_file.hpp"

#include "store/run_rows.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store/sqlite_errors.hpp"

namespace gpuscope::store {

void update_run_file(const std::filesystem::path& path, const std::string& what,
                     const std::function<void(Database&)>& write) {
  translate_sqlite_errors("cannot " + what + " in " + path.string(), "check the file is writable",
                          [&] {
                            Database db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX);
                            sqlite3_busy_timeout(db.handle(), 5000);
                            migrate(db, check_run_database(db, path));
                            db.exec("BEGIN IMMEDIATE");
                            try {
                              write(db);
                              db.exec("COMMIT");
                            } catch (...) {
                              if (sqlite3_get_autocommit(db.handle()) == 0) db.exec("ROLLBACK");
                              throw;
                            }
                            db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
                            return 0;
                          });
}

void add_devices(const std::filesystem::path& path, std::int64_t run_id,
                 const std::vector<DeviceDescription>& devices) {
  update_run_file(path, "add the GPUs", [&](Database& db) { insert_devices(db, run_id, devices); });
}

}  // namespace gpuscope::store
