#include "store/node_tables.hpp"

#include <fmt/format.h>

#include <array>

#include "store/sqlite.hpp"

namespace gpuscope::store {
namespace {

constexpr std::array kDomainColumns = std::to_array<Column>({
    {"domain", "INTEGER NOT NULL"},
    {"source", "TEXT NOT NULL"},  // 'powercap' or 'grace_hwmon'
    {"zone", "TEXT NOT NULL"},
    {"name", "TEXT"},
    {"kind", "TEXT NOT NULL"},
    {"socket", "INTEGER"},
    {"additive", "INTEGER NOT NULL"},
    {"includes_gpu", "INTEGER NOT NULL"},
    {"max_range_uj", "INTEGER"},
});

constexpr std::array kSampleColumns = std::to_array<Column>({
    {"domain", "INTEGER NOT NULL"},
    {"wall_ns", "INTEGER NOT NULL"},
    {"mono_ns", "INTEGER NOT NULL"},
    {"joules", "REAL NOT NULL"},
    {"power_w", "REAL"},
});

constexpr std::array kCpuTimeColumns = std::to_array<Column>({
    {"wall_ns", "INTEGER NOT NULL"},
    {"mono_ns", "INTEGER NOT NULL"},
    {"cgroup", "TEXT"},
    {"cgroup_usage_usec", "INTEGER"},
    {"node_busy_usec", "INTEGER"},
    {"node_total_usec", "INTEGER"},
});

std::string create_table(std::string_view table, std::span<const Column> columns,
                         std::string_view trailer = {}) {
  std::string sql =
      fmt::format("CREATE TABLE {} (\n  run_id INTEGER NOT NULL REFERENCES runs (run_id)", table);
  for (const auto& c : columns) sql += fmt::format(",\n  {} {}", c.name, c.declaration);
  sql += trailer;
  sql += "\n);\n";
  return sql;
}

std::string insert_sql(std::string_view table, std::span<const Column> columns) {
  return fmt::format("INSERT INTO {} (run_id, {}) VALUES ({})", table, column_names(columns),
                     placeholders(columns.size() + 1));
}

std::int64_t count(Database& db, std::string_view table, std::int64_t run_id,
                   std::string_view schema) {
  if (!has_table(db, table, schema)) return 0;
  Statement stmt =
      db.prepare(fmt::format("SELECT count(*) FROM {}.{} WHERE run_id = ?", schema, table));
  stmt.bind(1, run_id);
  return stmt.step() ? stmt.int64(0) : 0;
}

}  // namespace

std::span<const Column> node_domain_columns() {
  return kDomainColumns;
}
std::span<const Column> node_sample_columns() {
  return kSampleColumns;
}
std::span<const Column> node_cpu_time_columns() {
  return kCpuTimeColumns;
}

std::string create_node_tables_sql() {
  return create_table("node_energy_domains", kDomainColumns, ",\n  PRIMARY KEY (run_id, domain)") +
         create_table("node_energy_samples", kSampleColumns) +
         create_table("node_cpu_time", kCpuTimeColumns) +
         "CREATE INDEX node_energy_samples_by_domain ON node_energy_samples (run_id, domain, "
         "mono_ns);\n";
}

std::string insert_node_domain_sql() {
  return insert_sql("node_energy_domains", kDomainColumns);
}
std::string insert_node_sample_sql() {
  return insert_sql("node_energy_samples", kSampleColumns);
}
std::string insert_node_cpu_time_sql() {
  return insert_sql("node_cpu_time", kCpuTimeColumns);
}

void bind_node_domain(Statement& insert, std::int64_t run_id, const NodeEnergyDomain& d) {
  insert.bind(1, run_id);
  insert.bind(2, std::int64_t{d.domain});
  insert.bind(3, d.source);
  insert.bind(4, d.zone);
  insert.bind(5, d.name);
  insert.bind(6, d.kind);
  insert.bind(7, d.socket);
  insert.bind(8, std::int64_t{d.additive ? 1 : 0});
  insert.bind(9, std::int64_t{d.includes_gpu ? 1 : 0});
  insert.bind(10, d.max_range_uj);
}

void bind_node_sample(Statement& insert, std::int64_t run_id, const NodeEnergySample& s) {
  insert.bind(1, run_id);
  insert.bind(2, std::int64_t{s.domain});
  insert.bind(3, s.wall_ns);
  insert.bind(4, s.mono_ns);
  insert.bind(5, s.joules);
  insert.bind(6, s.power_w);
}

void bind_node_cpu_time(Statement& insert, std::int64_t run_id, const NodeCpuTime& t) {
  insert.bind(1, run_id);
  insert.bind(2, t.wall_ns);
  insert.bind(3, t.mono_ns);
  insert.bind(4, t.cgroup);
  insert.bind(5, t.cgroup_usage_usec);
  insert.bind(6, t.node_busy_usec);
  insert.bind(7, t.node_total_usec);
}

std::vector<NodeEnergyDomain> read_node_domains(Database& db, std::int64_t run_id) {
  std::vector<NodeEnergyDomain> out;
  if (!has_table(db, "node_energy_domains")) return out;
  Statement stmt = db.prepare("SELECT " + column_names(kDomainColumns) +
                              " FROM node_energy_domains WHERE run_id = ? ORDER BY domain");
  stmt.bind(1, run_id);
  while (stmt.step()) {
    NodeEnergyDomain d;
    d.domain = static_cast<unsigned>(stmt.int64(0));
    d.source = stmt.text(1);
    d.zone = stmt.text(2);
    d.name = stmt.opt_text(3).value_or("");
    d.kind = stmt.text(4);
    if (const auto socket = stmt.opt_int64(5)) d.socket = static_cast<unsigned>(*socket);
    d.additive = stmt.int64(6) != 0;
    d.includes_gpu = stmt.int64(7) != 0;
    if (const auto range = stmt.opt_int64(8)) d.max_range_uj = static_cast<std::uint64_t>(*range);
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<NodeEnergySample> read_node_samples(Database& db, std::int64_t run_id) {
  std::vector<NodeEnergySample> out;
  if (!has_table(db, "node_energy_samples")) return out;
  Statement stmt =
      db.prepare("SELECT " + column_names(kSampleColumns) +
                 " FROM node_energy_samples WHERE run_id = ? ORDER BY domain, mono_ns, rowid");
  stmt.bind(1, run_id);
  while (stmt.step()) {
    NodeEnergySample s;
    s.domain = static_cast<unsigned>(stmt.int64(0));
    s.wall_ns = stmt.int64(1);
    s.mono_ns = stmt.int64(2);
    s.joules = stmt.real(3);
    if (!stmt.is_null(4)) s.power_w = stmt.real(4);
    out.push_back(s);
  }
  return out;
}

std::vector<NodeCpuTime> read_node_cpu_times(Database& db, std::int64_t run_id) {
  std::vector<NodeCpuTime> out;
  if (!has_table(db, "node_cpu_time")) return out;
  Statement stmt = db.prepare("SELECT " + column_names(kCpuTimeColumns) +
                              " FROM node_cpu_time WHERE run_id = ? ORDER BY mono_ns, rowid");
  stmt.bind(1, run_id);
  while (stmt.step()) {
    NodeCpuTime t;
    t.wall_ns = stmt.int64(0);
    t.mono_ns = stmt.int64(1);
    t.cgroup = stmt.opt_text(2);
    t.cgroup_usage_usec = stmt.opt_int64(3);
    t.node_busy_usec = stmt.opt_int64(4);
    t.node_total_usec = stmt.opt_int64(5);
    out.push_back(std::move(t));
  }
  return out;
}

std::int64_t count_node_rows(Database& db, std::int64_t run_id, std::string_view schema) {
  return count(db, "node_energy_domains", run_id, schema) +
         count(db, "node_energy_samples", run_id, schema) +
         count(db, "node_cpu_time", run_id, schema);
}

}  // namespace gpuscope::store
