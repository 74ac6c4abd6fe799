#include "store/schema.hpp"

#include <fmt/format.h>

#include <array>
#include <set>

#include "core/error.hpp"
#include "core/metrics.hpp"
#include "store/grid_tables.hpp"
#include "store/health_tables.hpp"
#include "store/kernel_tables.hpp"
#include "store/node_tables.hpp"
#include "store/phase_tables.hpp"
#include "store/sqlite_errors.hpp"
#include "store/time_text.hpp"

namespace gpuscope::store {
namespace {

constexpr std::array kRunColumns = std::to_array<Column>({
    {"command", "TEXT NOT NULL"},  // JSON array of argv
    {"command_line", "TEXT NOT NULL"},
    {"label", "TEXT"},
    {"host", "TEXT"},
    {"user", "TEXT"},
    {"start_wall_ns", "INTEGER NOT NULL"},
    {"start_time", "TEXT NOT NULL"},
    {"end_wall_ns", "INTEGER"},
    {"end_time", "TEXT"},
    {"start_mono_ns", "INTEGER NOT NULL"},
    {"end_mono_ns", "INTEGER"},
    {"status",
     "TEXT NOT NULL CHECK (status IN "
     "('running', 'finished', 'signaled', 'timed_out', 'not_started'))"},
    {"exit_code", "INTEGER"},
    {"term_signal", "INTEGER"},
    {"tool_version", "TEXT"},
    {"sampling_interval_ms", "REAL"},
    {"power_sampling_interval_ms", "REAL"},
    {"scenario", "TEXT"},
    {"driver_version", "TEXT"},
    {"cuda_visible_devices", "TEXT"},
    {"slurm_job_id", "TEXT"},
    {"slurm_step_id", "TEXT"},
    {"slurm_rank", "INTEGER"},
    {"slurm_local_rank", "INTEGER"},
    {"slurm_node_id", "INTEGER"},
    {"slurm_node_name", "TEXT"},
    {"slurm_ntasks", "INTEGER"},
    {"slurm_step_gpus", "TEXT"},
    {"samples_taken", "INTEGER"},
    {"deadlines_missed", "INTEGER"},
    {"problems", "TEXT NOT NULL DEFAULT '[]'"},  // JSON array of sentences
    // 1.3: the rank context under any launcher (ranks/rank_context.hpp). Added at the end so
    // a file upgraded with ALTER TABLE has the columns in the same order as a new one.
    {"launcher", "TEXT"},
    {"launcher_job_id", "TEXT"},
    {"rank", "INTEGER"},
    {"local_rank", "INTEGER"},
    {"world_size", "INTEGER"},
    {"local_world_size", "INTEGER"},
    {"node_name", "TEXT"},
    {"pod_name", "TEXT"},
    {"pod_namespace", "TEXT"},
    // 1.7: where the samples came from when gpuscope did not take them (RunInfo::origin).
    {"origin", "TEXT"},
});

// The run columns schema 1.3 added (migrate() adds them to an older file).
constexpr std::size_t kRunColumnsBefore13 = 31;

constexpr std::array kProcessColumns = std::to_array<Column>({
    {"pid", "INTEGER NOT NULL"},
    {"start_ticks", "INTEGER"},
    {"first_wall_ns", "INTEGER NOT NULL"},
    {"first_mono_ns", "INTEGER NOT NULL"},
    {"command", "TEXT"},
    {"command_line", "TEXT"},
    {"uid", "INTEGER"},
    {"user", "TEXT"},
    {"ppid", "INTEGER"},
    {"cgroup", "TEXT"},
    {"container_id", "TEXT"},
    {"container_runtime", "TEXT"},
    {"pod_uid", "TEXT"},
    {"pod_name", "TEXT"},
    {"pod_namespace", "TEXT"},
    {"slurm_job_id", "TEXT"},
    {"slurm_step", "TEXT"},
    {"launcher", "TEXT"},
    {"rank", "INTEGER"},
    {"local_rank", "INTEGER"},
    {"in_job", "INTEGER"},  // 1, 0, or NULL where there is no job
});

constexpr std::array kProcessSampleColumns = std::to_array<Column>({
    {"device_index", "INTEGER NOT NULL"},
    {"wall_ns", "INTEGER NOT NULL"},
    {"mono_ns", "INTEGER NOT NULL"},
    {"pid", "INTEGER NOT NULL"},
    {"used_memory_bytes", "INTEGER"},
    {"sm_percent", "REAL"},
    {"memory_percent", "REAL"},
});

constexpr std::array kDeviceColumns = std::to_array<Column>({
    {"device_index", "INTEGER NOT NULL"},
    {"uuid", "TEXT"},
    {"name", "TEXT"},
    {"pci_bus_id", "TEXT"},
    {"architecture", "TEXT"},
    {"compute_capability", "TEXT"},
    {"memory_total_bytes", "INTEGER"},
    {"power_limit_w", "REAL"},
    {"enforced_power_limit_w", "REAL"},
    {"default_power_limit_w", "REAL"},
    {"min_power_limit_w", "REAL"},
    {"max_power_limit_w", "REAL"},
    {"max_sm_clock_mhz", "INTEGER"},
    {"max_memory_clock_mhz", "INTEGER"},
    {"max_graphics_clock_mhz", "INTEGER"},
    {"capabilities",
     "TEXT NOT NULL DEFAULT '[]'"},  // JSON array of {key, label, supported, detail}
    {"error", "TEXT"},
    // 1.6: where the saturation metrics came from ('gpm', 'dcgm'; NULL: nowhere) and why.
    {"saturation_source", "TEXT"},
    {"saturation_detail", "TEXT"},
    // 1.9: MIG (core/mig.hpp). A GPU: whether MIG mode was on (1/0; NULL: cannot do MIG or did
    // not say). A MIG device (row index 1000 + 100 × parent + GPU instance id): who it is; all
    // NULL on a GPU.
    {"mig_enabled", "INTEGER"},
    {"parent_index", "INTEGER"},
    {"mig_index", "INTEGER"},
    {"gpu_instance_id", "INTEGER"},
    {"compute_instance_id", "INTEGER"},
    {"mig_profile", "TEXT"},
    {"gpu_slices", "INTEGER"},
    {"compute_slices", "INTEGER"},
    {"multiprocessors", "INTEGER"},
    {"parent_slices", "INTEGER"},
    // 1.11: which library answered for the device ('nvidia', 'amd'; NULL in an older file:
    // nvidia) and an AMD GPU's index in its library's order (docs/amd.md).
    {"vendor", "TEXT"},
    {"vendor_index", "INTEGER"},
});

// The device columns schema 1.6 added (migrate() adds them to an older file).
constexpr std::size_t kDeviceColumnsBefore16 = 17;
// The device columns schema 1.9 added.
constexpr std::size_t kDeviceColumnsBefore19 = 19;
static_assert(kDeviceColumns[kDeviceColumnsBefore16].name == "saturation_source");
// The device columns schema 1.11 added.
constexpr std::size_t kDeviceColumnsBefore111 = 29;
static_assert(kDeviceColumns[kDeviceColumnsBefore19].name == "mig_enabled");
static_assert(kDeviceColumns[kDeviceColumnsBefore111].name == "vendor");
// The first metric schema 1.12 added to samples and sample_chunks.
constexpr Metric kFirstMetricOf112 = Metric::UmcActivityPct;

constexpr std::array kPowerColumns = std::to_array<Column>({
    {"device_index", "INTEGER NOT NULL"},
    {"wall_ns", "INTEGER NOT NULL"},
    {"mono_ns", "INTEGER NOT NULL"},
    {"power_w", "REAL"},
    {"power_instant_w", "REAL"},
    {"energy_mj", "INTEGER"},
});

constexpr std::array kEventColumns = std::to_array<Column>({
    {"wall_ns", "INTEGER NOT NULL"},
    {"mono_ns", "INTEGER NOT NULL"},
    {"device_index", "INTEGER"},
    {"kind", "TEXT NOT NULL"},
    {"detail", "TEXT NOT NULL"},
});

constexpr std::array kOutputColumns = std::to_array<Column>({
    {"wall_ns", "INTEGER NOT NULL"},
    {"mono_ns", "INTEGER NOT NULL"},
    {"stream", "TEXT NOT NULL CHECK (stream IN ('stdout', 'stderr'))"},
    {"line", "TEXT NOT NULL"},
});

std::string create_table(std::string_view table, std::span<const Column> columns,
                         std::string_view run_id, std::string_view trailer = {}) {
  std::string sql = fmt::format("CREATE TABLE {} (\n  {}", table, run_id);
  for (const auto& c : columns) sql += fmt::format(",\n  {} {}", c.name, c.declaration);
  sql += trailer;
  sql += "\n);\n";
  return sql;
}

constexpr std::string_view kind_name(MetricKind kind) {
  switch (kind) {
    case MetricKind::Gauge:
      return "gauge";
    case MetricKind::Counter:
      return "counter";
    case MetricKind::Bitmask:
      return "bitmask";
  }
  return "gauge";
}

void insert_catalog(Database& db) {
  Statement insert = db.prepare(
      "INSERT INTO metrics (position, name, unit, kind, storage, source, description) "
      "VALUES (?, ?, ?, ?, ?, ?, ?)");
  for (std::size_t i = 0; i < kStoredMetricCount; ++i) {
    const auto& m = kMetrics[i];
    insert.bind(1, static_cast<std::int64_t>(i));
    insert.bind_static(2, m.name);
    insert.bind_static(3, m.unit);
    insert.bind_static(4, kind_name(m.kind));
    insert.bind_static(5, m.storage == MetricStorage::Real ? "REAL" : "INTEGER");
    insert.bind_static(6, m.source);
    insert.bind_static(7, m.description);
    insert.run();
  }
}

}  // namespace

std::span<const Column> run_columns() {
  return kRunColumns;
}
std::span<const Column> device_columns() {
  return kDeviceColumns;
}
std::span<const Column> power_columns() {
  return kPowerColumns;
}
std::span<const Column> event_columns() {
  return kEventColumns;
}
std::span<const Column> output_columns() {
  return kOutputColumns;
}
std::span<const Column> process_columns() {
  return kProcessColumns;
}
std::span<const Column> process_sample_columns() {
  return kProcessSampleColumns;
}

std::string create_process_tables_sql() {
  constexpr std::string_view kRunRef = "run_id INTEGER NOT NULL REFERENCES runs (run_id)";
  return create_table("processes", kProcessColumns, kRunRef) +
         create_table("process_samples", kProcessSampleColumns, kRunRef) +
         "CREATE INDEX processes_by_pid ON processes (run_id, pid);\n"
         "CREATE INDEX process_samples_by_device ON process_samples (run_id, device_index, "
         "mono_ns);\n";
}

bool has_table(Database& db, std::string_view table, std::string_view schema) {
  Statement stmt = db.prepare(
      fmt::format("SELECT 1 FROM {}.sqlite_schema WHERE type = 'table' AND name = ?", schema));
  stmt.bind(1, std::string(table));
  return stmt.step();
}

bool has_column(Database& db, std::string_view table, std::string_view column,
                std::string_view schema) {
  Statement info = db.prepare(fmt::format("PRAGMA {}.table_info({})", schema, table));
  while (info.step()) {
    if (info.text(1) == column) return true;
  }
  return false;
}

std::string select_list(Database& db, std::string_view table, std::span<const Column> columns,
                        std::string_view schema) {
  std::set<std::string> present;
  Statement info = db.prepare(fmt::format("PRAGMA {}.table_info({})", schema, table));
  while (info.step()) present.insert(info.text(1));
  std::string out;
  for (const auto& c : columns) {
    if (!out.empty()) out += ", ";
    if (present.count(std::string(c.name)) != 0) {
      out += c.name;
    } else {
      out += fmt::format("NULL AS {}", c.name);
    }
  }
  return out;
}

const std::vector<Column>& sample_columns() {
  static const std::vector<Column> columns = [] {
    std::vector<Column> out = {{"device_index", "INTEGER NOT NULL"},
                               {"wall_ns", "INTEGER NOT NULL"},
                               {"mono_ns", "INTEGER NOT NULL"}};
    for (const auto& m : stored_metrics()) {
      out.push_back({m.name, m.storage == MetricStorage::Real ? "REAL" : "INTEGER"});
    }
    return out;
  }();
  return columns;
}

const std::vector<Column>& chunk_columns() {
  static const std::vector<Column> columns = [] {
    std::vector<Column> out = {
        {"device_index", "INTEGER NOT NULL"}, {"first_mono_ns", "INTEGER NOT NULL"},
        {"last_mono_ns", "INTEGER NOT NULL"}, {"row_count", "INTEGER NOT NULL"},
        {"wall_ns", "BLOB NOT NULL"},         {"mono_ns", "BLOB NOT NULL"}};
    // The metrics of schema 1.12 may be NULL (every row NULL): a migrated file has none.
    for (const auto& m : stored_metrics()) {
      out.push_back({m.name, m.id >= kFirstMetricOf112 ? "BLOB" : "BLOB NOT NULL"});
    }
    return out;
  }();
  return columns;
}

std::string create_chunks_sql() {
  return create_table("sample_chunks", chunk_columns(),
                      "run_id INTEGER NOT NULL REFERENCES runs (run_id)") +
         "CREATE INDEX sample_chunks_by_device ON sample_chunks (run_id, device_index, "
         "first_mono_ns);\n";
}

std::string create_sample_counts_sql() {
  // Any change to a run's samples rows after the count (by any SQLite client: a hand edit, a
  // tool of the user's) deletes the run's counts, so a reader never trusts a stale one.
  return "CREATE TABLE sample_counts (\n  run_id INTEGER NOT NULL REFERENCES runs (run_id),\n"
         "  device_index INTEGER NOT NULL,\n  row_count INTEGER NOT NULL,\n"
         "  PRIMARY KEY (run_id, device_index)\n);\n"
         "CREATE TRIGGER samples_insert_uncounts AFTER INSERT ON samples BEGIN\n"
         "  DELETE FROM sample_counts WHERE run_id = NEW.run_id;\nEND;\n"
         "CREATE TRIGGER samples_delete_uncounts AFTER DELETE ON samples BEGIN\n"
         "  DELETE FROM sample_counts WHERE run_id = OLD.run_id;\nEND;\n"
         "CREATE TRIGGER samples_update_uncounts AFTER UPDATE OF run_id, device_index, mono_ns "
         "ON samples BEGIN\n"
         "  DELETE FROM sample_counts WHERE run_id IN (OLD.run_id, NEW.run_id);\nEND;\n";
}

std::string column_names(std::span<const Column> columns, std::string_view prefix) {
  std::string out;
  for (const auto& c : columns) {
    if (!out.empty()) out += ", ";
    out += prefix;
    out += c.name;
  }
  return out;
}

std::int64_t copy_run_rows(Database& db, std::string_view table, std::span<const Column> columns,
                           std::int64_t old_id, std::int64_t new_id) {
  // An older input may lack columns added since: they copy as NULL.
  Statement copy = db.prepare(fmt::format(
      "INSERT INTO main.{0} (run_id, {1}) SELECT ?1, {2} FROM src.{0} WHERE run_id = ?2 "
      "ORDER BY rowid",
      table, column_names(columns), select_list(db, table, columns, "src")));
  copy.bind(1, new_id);
  copy.bind(2, old_id);
  copy.run();
  return db.changes();
}

std::string placeholders(std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) out += i == 0 ? "?" : ", ?";
  return out;
}

void create_schema(Database& db, std::string_view created_by) {
  constexpr std::string_view kRunRef = "run_id INTEGER NOT NULL REFERENCES runs (run_id)";
  std::string sql = "BEGIN;\n";
  sql += fmt::format("PRAGMA application_id = {};\nPRAGMA user_version = {};\n", kApplicationId,
                     kSchemaVersion);
  sql += "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);\n";
  sql +=
      "CREATE TABLE metrics (position INTEGER NOT NULL, name TEXT PRIMARY KEY, unit TEXT NOT "
      "NULL, kind TEXT NOT NULL, storage TEXT NOT NULL, source TEXT, description TEXT);\n";
  sql += create_table("runs", kRunColumns, "run_id INTEGER PRIMARY KEY");
  sql +=
      create_table("devices", kDeviceColumns, kRunRef, ",\n  PRIMARY KEY (run_id, device_index)");
  sql += create_table("samples", sample_columns(), kRunRef);
  sql += create_table("power_samples", kPowerColumns, kRunRef);
  sql += create_table("events", kEventColumns, kRunRef);
  sql += create_table("output", kOutputColumns, kRunRef);
  sql += create_chunks_sql();
  sql += create_sample_counts_sql();
  sql += create_kernel_tables_sql();
  sql += create_process_tables_sql();
  sql += create_grid_tables_sql();
  sql += create_phase_tables_sql();
  sql += create_health_tables_sql();
  sql += create_node_tables_sql();
  // The reader's order (run, device, time) and every per-GPU query walk this index.
  sql += "CREATE INDEX samples_by_device ON samples (run_id, device_index, mono_ns);\n";
  sql += "CREATE INDEX power_samples_by_device ON power_samples (run_id, device_index, mono_ns);\n";
  sql += "CREATE INDEX events_by_time ON events (run_id, mono_ns);\n";
  sql += "CREATE INDEX output_by_time ON output (run_id, mono_ns);\n";
  sql += fmt::format(
      "INSERT INTO meta (key, value) VALUES ('schema_version', '{}'), "
      "('schema_minor_version', '{}'), ('created_by', {}), ('created_at', {});\n",
      kSchemaVersion, kSchemaMinorVersion, sql_quote(created_by), sql_quote(iso8601_now()));
  db.exec(sql);
  insert_catalog(db);
  db.exec("COMMIT");
}

namespace {

// gpuscope's own triggers (schema 1.13), each as "name table sql" the way sqlite_schema keeps it.
const std::set<std::string>& own_triggers() {
  static const std::set<std::string> triggers = [] {
    Database fresh(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
    fresh.exec("CREATE TABLE samples (run_id, device_index, mono_ns);\n" +
               create_sample_counts_sql());
    std::set<std::string> out;
    Statement list = fresh.prepare(
        "SELECT name || ' ' || tbl_name || ' ' || sql FROM sqlite_schema WHERE type = 'trigger'");
    while (list.step()) out.insert(list.text(0));
    return out;
  }();
  return triggers;
}

// A run database holds tables, indexes and gpuscope's own triggers: a view, a virtual table
// (rootpage 0) or another trigger is code of the file's making that a read would run.
void refuse_foreign_objects(Database& db, const std::string& name) {
  Statement list = db.prepare(
      "SELECT type, name, name || ' ' || tbl_name || ' ' || ifnull(sql, '') FROM sqlite_schema "
      "WHERE type IN ('view', 'trigger') OR (type = 'table' AND rootpage = 0) ORDER BY type, name");
  while (list.step()) {
    const std::string type = list.text(0);
    if (type == "trigger" && own_triggers().count(list.text(2)) != 0) continue;
    const char* what = type == "view"      ? "a view"
                       : type == "trigger" ? "a trigger"
                                           : "a virtual table";
    throw Error::usage(
        fmt::format("{} is not a run database as gpuscope writes them: it holds {} ({})", name,
                    what, list.text(1)),
        "a run database holds tables, indexes and gpuscope's own triggers; a view, a virtual "
        "table or another trigger is the file's own code, which a read would run; a view can "
        "run for ever",
        "give the run database gpuscope wrote, or copy its tables into a new file");
  }
}

}  // namespace

int check_run_database(Database& db, const std::filesystem::path& path) {
  const std::string name = path.string();
  std::int64_t application_id = 0;
  std::int64_t version = 0;
  std::int64_t tables = 0;
  try {
    // Reading the header and the schema is what fails on a file that is not SQLite.
    application_id = db.query_int("PRAGMA application_id").value_or(0);
    version = db.query_int("PRAGMA user_version").value_or(0);
    tables = db.query_int("SELECT count(*) FROM sqlite_schema").value_or(0);
  } catch (const SqliteError& e) {
    if (e.code() == SQLITE_NOTADB || e.code() == SQLITE_CORRUPT) {
      throw Error::usage(name + " is not a SQLite database", e.what(),
                         "give the run database gpuscope profile wrote (-o)");
    }
    throw Error::usage("cannot read " + name, e.what());
  }
  if (application_id != kApplicationId) {
    const std::string why = tables == 0 ? "it is empty"
                                        : fmt::format("application_id {:#x}, expected {:#x}",
                                                      static_cast<std::uint32_t>(application_id),
                                                      static_cast<std::uint32_t>(kApplicationId));
    throw Error::usage(name + " is not a gpuscope run database", why,
                       "give the run database gpuscope profile wrote (-o)");
  }
  if (version > kSchemaVersion) {
    throw Error::usage(
        fmt::format("{} was written by a newer gpuscope", name),
        fmt::format("schema {}, this gpuscope reads up to {}", version, kSchemaVersion),
        "upgrade gpuscope");
  }
  if (version < kOldestReadableSchema) {
    throw Error::usage(name + " is not a gpuscope run database",
                       fmt::format("schema version {}", version),
                       "give the run database gpuscope profile wrote (-o)");
  }
  try {
    refuse_foreign_objects(db, name);
  } catch (const SqliteError& e) {
    throw Error::usage("cannot read " + name, e.what());
  }
  return static_cast<int>(version);
}

namespace {

// ALTER TABLE ... ADD COLUMN for each of `columns` the table lacks (added at the end, so an
// upgraded file has its columns in the same order as a new one).
void add_missing_columns(Database& db, std::string_view table, std::span<const Column> columns) {
  std::set<std::string> present;
  Statement info = db.prepare(fmt::format("PRAGMA main.table_info({})", table));
  while (info.step()) present.insert(info.text(1));
  for (const auto& c : columns) {
    if (present.count(std::string(c.name)) == 0) {
      db.exec(fmt::format("ALTER TABLE {} ADD COLUMN {} {}", table, c.name, c.declaration));
    }
  }
}

}  // namespace

void migrate(Database& db, int from_version) {
  // Each step upgrades one version inside a transaction, then bumps user_version, so an
  // interrupted migration leaves a consistent older database.
  for (int version = from_version; version < kSchemaVersion; ++version) {
    db.exec("BEGIN IMMEDIATE");
    // switch (version) { case 1: migrate_1_to_2(db); break; }
    db.exec(fmt::format("PRAGMA user_version = {}", version + 1));
    db.exec("COMMIT");
  }
  const int minor = schema_minor_version(db);
  if (minor >= kSchemaMinorVersion) return;
  db.exec("BEGIN IMMEDIATE");
  if (minor < 1 && !has_sample_chunks(db)) db.exec(create_chunks_sql());
  if (minor < 2 && !has_kernel_tables(db)) db.exec(create_kernel_tables_sql());
  if (minor < 3) {
    add_missing_columns(db, "runs", std::span(kRunColumns).subspan(kRunColumnsBefore13));
    if (!has_table(db, "processes", "main")) db.exec(create_process_tables_sql());
  }
  if (minor < 4 && !has_table(db, "grid_intensity", "main")) db.exec(create_grid_tables_sql());
  if (minor < 5 && !has_table(db, "phases", "main")) db.exec(create_phase_tables_sql());
  if (minor < 6) {
    add_missing_columns(db, "devices", std::span(kDeviceColumns).subspan(kDeviceColumnsBefore16));
  }
  if (minor < 7) add_missing_columns(db, "runs", kRunColumns);
  if (minor < 8 && !has_table(db, "health_samples", "main")) db.exec(create_health_tables_sql());
  if (minor < 9) {
    add_missing_columns(db, "devices", std::span(kDeviceColumns).subspan(kDeviceColumnsBefore19));
  }
  if (minor < 10 && !has_table(db, "node_energy_domains", "main")) {
    db.exec(create_node_tables_sql());
  }
  if (minor < 11) {
    add_missing_columns(db, "devices", std::span(kDeviceColumns).subspan(kDeviceColumnsBefore111));
  }
  if (minor < 12) {
    add_missing_columns(db, "samples", sample_columns());
    if (has_sample_chunks(db)) add_missing_columns(db, "sample_chunks", chunk_columns());
  }
  if (minor < 13 && !has_table(db, "sample_counts", "main")) db.exec(create_sample_counts_sql());
  db.exec(
      fmt::format("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_minor_version', '{}')",
                  kSchemaMinorVersion));
  db.exec("COMMIT");
}

int schema_minor_version(Database& db, std::string_view schema) {
  Statement stmt = db.prepare(
      fmt::format("SELECT value FROM {}.meta WHERE key = 'schema_minor_version'", schema));
  if (!stmt.step()) return 0;
  return static_cast<int>(stmt.int64(0));
}

bool has_sample_chunks(Database& db, std::string_view schema) {
  Statement stmt = db.prepare(fmt::format(
      "SELECT 1 FROM {}.sqlite_schema WHERE type = 'table' AND name = 'sample_chunks'", schema));
  return stmt.step();
}

}  // namespace gpuscope::store
