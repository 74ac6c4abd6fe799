#include "store/phase_tables.hpp"

#include <array>

#include "store/sqlite.hpp"
#include "store/update_run_file.hpp"

namespace gpuscope::store {
namespace {

constexpr std::array kPhaseColumns = std::to_array<Column>({
    {"source", "TEXT NOT NULL CHECK (source IN ('nvtx', 'mark', 'output'))"},
    {"name", "TEXT NOT NULL"},
    {"instance", "TEXT"},
    {"domain", "TEXT"},
    {"category", "INTEGER"},
    {"pid", "INTEGER"},
    {"tid", "INTEGER"},
    {"start_mono_ns", "INTEGER NOT NULL"},
    {"end_mono_ns", "INTEGER NOT NULL"},
    {"kind", "TEXT NOT NULL CHECK (kind IN ('range', 'point'))"},
    {"closed", "INTEGER NOT NULL"},
    {"device_index", "INTEGER"},
});

std::optional<std::string> non_empty(const std::string& text) {
  return text.empty() ? std::nullopt : std::optional<std::string>(text);
}

}  // namespace

std::span<const Column> phase_columns() {
  return kPhaseColumns;
}

std::string create_phase_tables_sql() {
  std::string sql = "CREATE TABLE phases (\n  run_id INTEGER NOT NULL REFERENCES runs (run_id)";
  for (const auto& c : kPhaseColumns) {
    sql += ",\n  ";
    sql += c.name;
    sql += ' ';
    sql += c.declaration;
  }
  sql += "\n);\nCREATE INDEX phases_by_time ON phases (run_id, start_mono_ns);\n";
  return sql;
}

std::string insert_phase_sql() {
  return "INSERT INTO phases (run_id, " + column_names(kPhaseColumns) + ") VALUES (" +
         placeholders(kPhaseColumns.size() + 1) + ")";
}

void bind_phase(Statement& insert, std::int64_t run_id, const Phase& p) {
  int i = 0;
  insert.bind(++i, run_id);
  insert.bind_static(++i, to_text(p.source));
  insert.bind(++i, p.name);
  insert.bind(++i, non_empty(p.instance));
  insert.bind(++i, non_empty(p.domain));
  insert.bind(++i, p.category ? std::optional<std::int64_t>(*p.category) : std::nullopt);
  insert.bind(++i, p.pid);
  insert.bind(++i, p.tid);
  insert.bind(++i, p.start_mono_ns);
  insert.bind(++i, p.end_mono_ns);
  insert.bind_static(++i, p.point ? "point" : "range");
  insert.bind(++i, std::int64_t{p.closed ? 1 : 0});
  insert.bind(++i, p.device_index ? std::optional<std::int64_t>(*p.device_index) : std::nullopt);
}

void for_each_phase(Database& db, std::int64_t run_id, const std::function<void(Phase&&)>& fn) {
  if (!has_table(db, "phases")) return;
  Statement stmt =
      db.prepare("SELECT " + column_names(kPhaseColumns) +
                 " FROM phases WHERE run_id = ? ORDER BY start_mono_ns, end_mono_ns DESC, rowid");
  stmt.bind(1, run_id);
  Phase p;
  while (stmt.step()) {
    int i = 0;
    // The CHECK constraint holds the source to the three names; a file edited by hand that
    // breaks it is read as marks rather than refused.
    p.source = phase_source_from_text(stmt.text(i++)).value_or(PhaseSource::Mark);
    p.name = stmt.text(i++);
    p.instance = stmt.opt_text(i++).value_or("");
    p.domain = stmt.opt_text(i++).value_or("");
    const auto category = stmt.opt_int64(i++);
    p.category = category ? std::optional<std::uint32_t>(static_cast<std::uint32_t>(*category))
                          : std::nullopt;
    p.pid = stmt.opt_int64(i++);
    p.tid = stmt.opt_int64(i++);
    p.start_mono_ns = stmt.int64(i++);
    p.end_mono_ns = stmt.int64(i++);
    p.point = stmt.text(i++) == "point";
    p.closed = stmt.int64(i++) != 0;
    const auto device = stmt.opt_int64(i++);
    p.device_index = device && *device >= 0
                         ? std::optional<unsigned>(static_cast<unsigned>(*device))
                         : std::nullopt;
    if (p.end_mono_ns < p.start_mono_ns) p.end_mono_ns = p.start_mono_ns;
    fn(std::move(p));
  }
}

std::vector<Phase> read_phases(Database& db, std::int64_t run_id) {
  std::vector<Phase> out;
  for_each_phase(db, run_id, [&out](Phase&& p) { out.push_back(std::move(p)); });
  return out;
}

std::vector<Phase> read_phases(const std::filesystem::path& path, std::int64_t run_id) {
  Database db(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
  return read_phases(db, run_id);
}

std::int64_t count_phases(Database& db, std::int64_t run_id) {
  if (!has_table(db, "phases")) return 0;
  Statement stmt = db.prepare("SELECT count(*) FROM phases WHERE run_id = ?");
  stmt.bind(1, run_id);
  return stmt.step() ? stmt.int64(0) : 0;
}

void append_phases(const std::filesystem::path& path, std::int64_t run_id,
                   std::span<const Phase> phases) {
  update_run_file(path, "store the phases", [&](Database& db) {
    Statement insert = db.prepare(insert_phase_sql());
    for (const auto& phase : phases) {
      bind_phase(insert, run_id, phase);
      insert.run();
    }
  });
}

}  // namespace gpuscope::store
