#include "store/accounting_db.hpp"

#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include "core/error.hpp"
#include "store/accounting_impl.hpp"
#include "store/meta_version.hpp"
#include "store/sqlite_errors.hpp"

namespace gpuscope::store {

namespace {

const char* const kSchema = R"(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS updates(
  id INTEGER PRIMARY KEY, started_ms INTEGER NOT NULL, finished_ms INTEGER,
  from_ms INTEGER NOT NULL, to_ms INTEGER NOT NULL, covered_until_ms INTEGER,
  status TEXT NOT NULL, jobs_added INTEGER NOT NULL DEFAULT 0, server TEXT NOT NULL,
  message TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS jobs(
  job_id TEXT PRIMARY KEY, shown_id TEXT NOT NULL, name TEXT NOT NULL, user TEXT NOT NULL,
  account TEXT NOT NULL, partition TEXT NOT NULL, state TEXT NOT NULL, exit_code INTEGER,
  start_ms INTEGER NOT NULL, end_ms INTEGER NOT NULL, end_day TEXT NOT NULL,
  end_week TEXT NOT NULL, nodes TEXT NOT NULL, gpus INTEGER NOT NULL, gpu_model TEXT NOT NULL,
  gpu_hours REAL NOT NULL, idle_gpu_hours REAL, util_pct REAL, sm_active_pct REAL,
  peak_memory_bytes REAL, energy_j REAL, node_energy_j REAL, co2_g REAL, g_per_kwh REAL,
  score REAL, flags TEXT NOT NULL, source TEXT NOT NULL, notes TEXT NOT NULL,
  update_id INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS jobs_by_end ON jobs(end_ms);
CREATE INDEX IF NOT EXISTS jobs_by_user ON jobs(user, end_ms);
CREATE TABLE IF NOT EXISTS job_gpus(
  job_id TEXT NOT NULL, gpu_key TEXT NOT NULL, node TEXT NOT NULL, gpu_index INTEGER,
  model TEXT NOT NULL, mig_profile TEXT, samples INTEGER NOT NULL, util_pct REAL,
  sm_active_pct REAL, idle_share REAL, peak_memory_bytes REAL, memory_total_bytes REAL,
  energy_j REAL, energy_source TEXT, mean_power_w REAL, score REAL,
  health_faults INTEGER NOT NULL, PRIMARY KEY(job_id, gpu_key)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS node_days(
  node TEXT NOT NULL, day TEXT NOT NULL, held_gpu_s REAL NOT NULL, util_gpu_s REAL NOT NULL,
  gpus INTEGER NOT NULL, PRIMARY KEY(node, day)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage_days(
  day TEXT NOT NULL, week TEXT NOT NULL, user TEXT NOT NULL, account TEXT NOT NULL,
  partition TEXT NOT NULL, gpu_model TEXT NOT NULL, jobs INTEGER NOT NULL,
  gpu_hours REAL NOT NULL, idle_gpu_hours REAL NOT NULL, energy_j REAL NOT NULL,
  co2_g REAL NOT NULL, util_weight REAL NOT NULL, util_sum REAL NOT NULL,
  sm_weight REAL NOT NULL, sm_sum REAL NOT NULL, score_weight REAL NOT NULL,
  score_sum REAL NOT NULL, jobs_without_figures INTEGER NOT NULL,
  flagged_jobs INTEGER NOT NULL,
  PRIMARY KEY(day, user, account, partition, gpu_model)) WITHOUT ROWID;
)";

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// "mode 0640, owner slurm, group gpuadm" of `path`, for a refusal.
std::string who_may_read(const std::filesystem::path& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return "its mode cannot be read either";
  const passwd* pw = getpwuid(st.st_uid);
  const group* gr = getgrgid(st.st_gid);
  return fmt::format("mode {:04o}, owner {}, group {}", st.st_mode & 07777,
                     pw != nullptr ? pw->pw_name : std::to_string(st.st_uid),
                     gr != nullptr ? gr->gr_name : std::to_string(st.st_gid));
}

void check_readable(const std::filesystem::path& path) {
  if (::access(path.c_str(), F_OK) != 0) {
    throw Error(fmt::format("there is no accounting database {}", path.string()), {},
                "create it with gpuscope jobs --update --db FILE (docs/fleet.md), or give the "
                "site's (--db, GPUSCOPE_ACCOUNTING_DB)");
  }
  if (::access(path.c_str(), R_OK) != 0) {
    throw Error(fmt::format("you may not read the accounting database {}", path.string()),
                who_may_read(path),
                "the site decides who reads it: ask its administrators to add you to the "
                "file's group (docs/fleet.md, \"Who may read it\")");
  }
}

void check_schema(Database& db, const std::filesystem::path& path) {
  const std::optional<std::int64_t> version = meta_version(db, "accounting_schema");
  if (!version) {
    throw Error(fmt::format("{} is not a gpuscope accounting database", path.string()),
                "it has no accounting_schema in a meta table",
                "give the file gpuscope jobs --update --db wrote");
  }
  if (*version > kAccountingSchema) {
    throw Error(fmt::format("{} is of accounting schema {}, newer than this gpuscope's {}",
                            path.string(), *version, kAccountingSchema),
                {}, "read it with the gpuscope that wrote it, or a newer one");
  }
}

}  // namespace

AccountingDb::AccountingDb(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
AccountingDb::AccountingDb(AccountingDb&&) noexcept = default;
AccountingDb& AccountingDb::operator=(AccountingDb&&) noexcept = default;
AccountingDb::~AccountingDb() = default;

const std::filesystem::path& AccountingDb::path() const {
  return impl_->path;
}

AccountingDb AccountingDb::open_for_reading(const std::filesystem::path& path) {
  check_readable(path);
  return translate_sqlite_errors(
      fmt::format("cannot read the accounting database {}", path.string()),
      "check that it is the file gpuscope jobs --update wrote; a damaged one is rebuilt by "
      "moving it aside and running the update again over the period (docs/fleet.md)",
      [&] {
        auto impl = std::make_unique<Impl>(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
        sqlite3_busy_timeout(impl->db.handle(), 5000);
        check_schema(impl->db, path);
        impl->db.exec("PRAGMA query_only = 1");
        return AccountingDb(std::move(impl));
      });
}

AccountingDb AccountingDb::open_for_update(const std::filesystem::path& path, int busy_ms) {
  const bool existed = ::access(path.c_str(), F_OK) == 0;
  if (existed && ::access(path.c_str(), R_OK | W_OK) != 0) {
    throw Error(fmt::format("you may not update the accounting database {}", path.string()),
                who_may_read(path), "run the update as the file's owner (docs/fleet.md)");
  }
  return translate_sqlite_errors(
      fmt::format("cannot update the accounting database {}", path.string()),
      "another update may hold it (a timer and a manual run at once), or it is damaged: "
      "move it aside and run the update again over the period (docs/fleet.md)",
      [&] {
        if (!existed) create_empty_file(path, 0640);
        auto impl = std::make_unique<Impl>(
            path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
        sqlite3_busy_timeout(impl->db.handle(), busy_ms);
        int persist = 1;  // keep -wal and -shm: read-only users can then open the file
        sqlite3_file_control(impl->db.handle(), "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
        impl->db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
        if (!existed) {
          impl->db.exec(std::string("BEGIN IMMEDIATE;") + kSchema +
                        fmt::format("INSERT INTO meta VALUES('accounting_schema', '{}');"
                                    "COMMIT;",
                                    kAccountingSchema));
        }
        check_schema(impl->db, path);
        return AccountingDb(std::move(impl));
      });
}

std::optional<std::int64_t> AccountingDb::covered_until_ms() {
  auto s = impl_->db.prepare(
      "SELECT max(covered_until_ms) FROM updates WHERE covered_until_ms IS NOT NULL");
  if (s.step()) return s.opt_int64(0);
  return std::nullopt;
}

std::int64_t AccountingDb::begin_update(std::int64_t from_ms, std::int64_t to_ms,
                                        const std::string& server) {
  auto s = impl_->db.prepare(
      "INSERT INTO updates(started_ms, from_ms, to_ms, status, server) "
      "VALUES(?, ?, ?, 'running', ?)");
  s.bind(1, now_ms());
  s.bind(2, from_ms);
  s.bind(3, to_ms);
  s.bind(4, server);
  s.run();
  return impl_->db.last_insert_rowid();
}

void AccountingDb::finish_update(std::int64_t update_id, const std::string& status,
                                 const std::string& message) {
  auto s =
      impl_->db.prepare("UPDATE updates SET finished_ms = ?, status = ?, message = ? WHERE id = ?");
  s.bind(1, now_ms());
  s.bind(2, status);
  s.bind(3, message);
  s.bind(4, update_id);
  s.run();
}

}  // namespace gpuscope::store
