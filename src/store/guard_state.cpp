#include "store/guard_state.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "core/error.hpp"
#include "store/meta_version.hpp"
#include "store/sqlite.hpp"
#include "store/sqlite_errors.hpp"

namespace gpuscope::store {
namespace {

const char* const kSchema = R"(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs(
  job_id TEXT PRIMARY KEY, last_seen_ms INTEGER NOT NULL, checked_until_ms INTEGER,
  idle_since_ms INTEGER, first_warning_ms INTEGER, second_warning_ms INTEGER,
  cancelled_ms INTEGER, advised_too_large INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS notices(
  key TEXT PRIMARY KEY, recipient TEXT NOT NULL, sent_ms INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS notices_by_recipient ON notices(recipient, sent_ms);
CREATE TABLE IF NOT EXISTS drains(
  node TEXT PRIMARY KEY, drained_ms INTEGER NOT NULL, reason TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS digests(day TEXT PRIMARY KEY, sent_ms INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS audit(
  id INTEGER PRIMARY KEY, time_ms INTEGER NOT NULL, action TEXT NOT NULL,
  target TEXT NOT NULL, user TEXT NOT NULL, enforced INTEGER NOT NULL, outcome TEXT NOT NULL,
  figures TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS audit_by_time ON audit(time_ms);
)";

constexpr const char* kHint =
    "guard keeps its state there (rules: state): give it a file only guard writes; a damaged "
    "one may be moved aside (guard then starts over, and may warn a job again)";

void check_schema(Database& db, const std::filesystem::path& path) {
  const std::optional<std::int64_t> version = meta_version(db, "guard_schema");
  if (!version) {
    throw Error(fmt::format("{} is not gpuscope guard's state", path.string()),
                "it has no guard_schema in a meta table", kHint);
  }
  if (*version > kGuardSchema) {
    throw Error(fmt::format("{} is of guard schema {}, newer than this gpuscope's {}",
                            path.string(), *version, kGuardSchema),
                {}, "run the gpuscope that wrote it, or a newer one");
  }
}

template <typename F>
decltype(auto) in_state(const std::filesystem::path& path, F&& f) {
  return translate_sqlite_errors(fmt::format("guard's state {} failed", path.string()), kHint,
                                 std::forward<F>(f));
}

}  // namespace

struct GuardState::Impl {
  std::filesystem::path path;
  Database db;
  Impl(std::filesystem::path p, int flags) : path(std::move(p)), db(path, flags) {}
};

GuardState::GuardState(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GuardState::GuardState(GuardState&&) noexcept = default;
GuardState& GuardState::operator=(GuardState&&) noexcept = default;
GuardState::~GuardState() = default;

const std::filesystem::path& GuardState::path() const {
  return impl_->path;
}

GuardState GuardState::open(const std::filesystem::path& path) {
  const bool existed = ::access(path.c_str(), F_OK) == 0;
  if (existed && ::access(path.c_str(), R_OK | W_OK) != 0) {
    throw Error(fmt::format("you may not write guard's state {}", path.string()), {},
                "run guard as the user that owns it (the Slurm admin user, docs/guard.md)");
  }
  return translate_sqlite_errors(
      fmt::format("cannot open guard's state {}", path.string()), kHint, [&] {
        if (!existed) create_empty_file(path, 0600);
        auto impl = std::make_unique<Impl>(
            path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
        sqlite3_busy_timeout(impl->db.handle(), 10'000);
        impl->db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL");
        if (!existed) {
          impl->db.exec(
              std::string("BEGIN IMMEDIATE;") + kSchema +
              fmt::format("INSERT INTO meta VALUES('guard_schema', '{}'); COMMIT;", kGuardSchema));
        }
        check_schema(impl->db, path);
        return GuardState(std::move(impl));
      });
}

bool GuardState::switch_mode(const std::string& mode) {
  return in_state(impl_->path, [&] {
    auto read = impl_->db.prepare("SELECT value FROM meta WHERE key = 'mode'");
    const std::optional<std::string> was =
        read.step() ? std::optional<std::string>(read.text(0)) : std::nullopt;
    read.reset();
    if (was == mode) return false;
    impl_->db.exec("BEGIN IMMEDIATE");
    auto write = impl_->db.prepare("INSERT OR REPLACE INTO meta VALUES('mode', ?)");
    write.bind(1, mode);
    write.run();
    if (was) impl_->db.exec("DELETE FROM jobs");
    impl_->db.exec("COMMIT");
    return was.has_value();
  });
}

void GuardState::begin() {
  in_state(impl_->path, [&] { impl_->db.exec("BEGIN IMMEDIATE"); });
}
void GuardState::commit() {
  in_state(impl_->path, [&] { impl_->db.exec("COMMIT"); });
}

std::map<std::string, GuardJobMemory> GuardState::jobs() {
  return in_state(impl_->path, [&] {
    std::map<std::string, GuardJobMemory> out;
    auto s = impl_->db.prepare(
        "SELECT job_id, checked_until_ms, idle_since_ms, first_warning_ms, second_warning_ms, "
        "cancelled_ms, advised_too_large FROM jobs");
    while (s.step()) {
      GuardJobMemory m;
      m.checked_until_ms = s.opt_int64(1);
      m.idle_since_ms = s.opt_int64(2);
      m.first_warning_ms = s.opt_int64(3);
      m.second_warning_ms = s.opt_int64(4);
      m.cancelled_ms = s.opt_int64(5);
      m.advised_too_large = s.int64(6) != 0;
      out.emplace(s.text(0), m);
    }
    return out;
  });
}

void GuardState::save_job(const std::string& job_id, const GuardJobMemory& m,
                          std::int64_t seen_ms) {
  return in_state(impl_->path, [&] {
    auto s = impl_->db.prepare("INSERT OR REPLACE INTO jobs VALUES(?, ?, ?, ?, ?, ?, ?, ?)");
    s.bind(1, job_id);
    s.bind(2, seen_ms);
    s.bind(3, m.checked_until_ms);
    s.bind(4, m.idle_since_ms);
    s.bind(5, m.first_warning_ms);
    s.bind(6, m.second_warning_ms);
    s.bind(7, m.cancelled_ms);
    s.bind(8, std::int64_t{m.advised_too_large ? 1 : 0});
    s.run();
  });
}

std::size_t GuardState::forget_jobs(std::int64_t before_ms) {
  return in_state(impl_->path, [&] {
    auto s = impl_->db.prepare("DELETE FROM jobs WHERE last_seen_ms < ?");
    s.bind(1, before_ms);
    s.run();
    return static_cast<std::size_t>(impl_->db.changes());
  });
}

bool GuardState::claim_notice(const std::string& key, const std::string& recipient,
                              std::int64_t now_ms) {
  return in_state(impl_->path, [&] {
    auto s = impl_->db.prepare("INSERT OR IGNORE INTO notices VALUES(?, ?, ?)");
    s.bind(1, key);
    s.bind(2, recipient);
    s.bind(3, now_ms);
    s.run();
    return impl_->db.changes() == 1;
  });
}

void GuardState::release_notice(const std::string& key) {
  return in_state(impl_->path, [&] {
    auto s = impl_->db.prepare("DELETE FROM notices WHERE key = ?");
    s.bind(1, key);
    s.run();
  });
}

std::size_t GuardState::notices_to(const std::string& recipient, std::int64_t since_ms) {
  return in_state(impl_->path, [&] {
    auto s = impl_->db.prepare("SELECT count(*) FROM notices WHERE recipient = ? AND sent_ms >= ?");
    s.bind(1, recipient);
    s.bind(2, since_ms);
    return s.step() ? static_cast<std::size_t>(s.int64(0)) : 0;
  });
}

std::optional<std::int64_t> GuardState::time_mark(const std::string& key) {
  return in_state(impl_->path, [&] {
    auto s = impl_->db.prepare("SELECT value FROM meta WHERE key = ?");
    s.bind(1, "time:" + key);
    std::optional<std::int64_t> out;
    if (s.step()) {
      try {
        out = std::stoll(s.text(0));
      } catch (const std::exception&) {
        out.reset();  // unreadable: as if never kept
      }
    }
    return out;
  });
}

void GuardState::set_time_mark(const std::string& key, std::int64_t ms) {
  in_state(impl_->path, [&] {
    auto s = impl_->db.prepare("INSERT OR REPLACE INTO meta VALUES(?, ?)");
    s.bind(1, "time:" + key);
    s.bind(2, std::to_string(ms));
    s.run();
  });
}

void GuardState::record_drain(const std::string& node, const std::string& reason,
                              std::int64_t now_ms) {
  return in_state(impl_->path, [&] {
    auto s = impl_->db.prepare("INSERT OR REPLACE INTO drains VALUES(?, ?, ?)");
    s.bind(1, node);
    s.bind(2, now_ms);
    s.bind(3, reason);
    s.run();
  });
}

std::optional<std::int64_t> GuardState::drained_ms(const std::string& node) {
  return in_state(impl_->path, [&] {
    auto s = impl_->db.prepare("SELECT drained_ms FROM drains WHERE node = ?");
    s.bind(1, node);
    if (s.step()) return std::optional<std::int64_t>(s.int64(0));
    return std::optional<std::int64_t>();
  });
}

bool GuardState::claim_digest(const std::string& day, std::int64_t now_ms) {
  return in_state(impl_->path, [&] {
    auto s = impl_->db.prepare("INSERT OR IGNORE INTO digests VALUES(?, ?)");
    s.bind(1, day);
    s.bind(2, now_ms);
    s.run();
    return impl_->db.changes() == 1;
  });
}

void GuardState::audit(const GuardAudit& r) {
  return in_state(impl_->path, [&] {
    auto s = impl_->db.prepare(
        "INSERT INTO audit(time_ms, action, target, user, enforced, outcome, figures) "
        "VALUES(?, ?, ?, ?, ?, ?, ?)");
    s.bind(1, r.time_ms);
    s.bind(2, r.action);
    s.bind(3, r.target);
    s.bind(4, r.user);
    s.bind(5, std::int64_t{r.enforced ? 1 : 0});
    s.bind(6, r.outcome);
    s.bind(7, r.figures);
    s.run();
  });
}

std::vector<GuardAudit> GuardState::audit_since(std::int64_t from_ms) {
  return in_state(impl_->path, [&] {
    std::vector<GuardAudit> out;
    auto s = impl_->db.prepare(
        "SELECT time_ms, action, target, user, enforced, outcome, figures FROM audit "
        "WHERE time_ms >= ? ORDER BY id");
    s.bind(1, from_ms);
    while (s.step()) {
      out.push_back(
          {s.int64(0), s.text(1), s.text(2), s.text(3), s.int64(4) != 0, s.text(5), s.text(6)});
    }
    return out;
  });
}

}  // namespace gpuscope::store
