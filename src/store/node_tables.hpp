// The node's energy tables of a run database (schema 1.10; docs/database.md, "node_energy_*"):
// the energy domains a run found (node_energy_domains), their readings (node_energy_samples) and
// the CPU time of the job's cgroup and of the node at the job's start and end (node_cpu_time).
// Rows are rare (one per domain a second), so they are plain rows; written through the
// RunWriter, copied by merge with their run, read by RunReader (core/node_energy.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/node_energy.hpp"
#include "store/schema.hpp"

namespace gpuscope::store {

class Database;
class Statement;

// The columns of each table after its leading run_id.
std::span<const Column> node_domain_columns();
std::span<const Column> node_sample_columns();
std::span<const Column> node_cpu_time_columns();
// The DDL of the three tables and their indexes (create_schema, and migrate() from 1.9).
std::string create_node_tables_sql();

// INSERT statements' texts for one row of (run_id, the table's columns), and their binders.
std::string insert_node_domain_sql();
std::string insert_node_sample_sql();
std::string insert_node_cpu_time_sql();
void bind_node_domain(Statement& insert, std::int64_t run_id, const NodeEnergyDomain& domain);
void bind_node_sample(Statement& insert, std::int64_t run_id, const NodeEnergySample& sample);
void bind_node_cpu_time(Statement& insert, std::int64_t run_id, const NodeCpuTime& time);

// Run `run_id`'s rows: domains by number, readings by domain then time, CPU times by time. None
// for a file without the tables (older than 1.10).
std::vector<NodeEnergyDomain> read_node_domains(Database& db, std::int64_t run_id);
std::vector<NodeEnergySample> read_node_samples(Database& db, std::int64_t run_id);
std::vector<NodeCpuTime> read_node_cpu_times(Database& db, std::int64_t run_id);
// The number of rows of the three tables of `schema`'s run `run_id` (0 without them).
std::int64_t count_node_rows(Database& db, std::int64_t run_id, std::string_view schema = "main");

}  // namespace gpuscope::store
