#include "store/row_inserter.hpp"

#include <bitset>
#include <cmath>
#include <stdexcept>

#include "core/metrics.hpp"
#include "store/chunk_io.hpp"
#include "store/health_tables.hpp"
#include "store/node_tables.hpp"
#include "store/phase_tables.hpp"
#include "store/run_codec.hpp"
#include "store/schema.hpp"

namespace gpuscope::store {
namespace {

// Rows per samples INSERT: fewer steps and resets per row (8 rows saved ~10 % of the per-row
// cost, measured by bench_store_insert; 32 another ~10 % of an import's writer thread, bench/logs)
// with an SQL text of a few kB.
constexpr std::size_t kSamplesPerInsert = 32;
// Chunks waiting for a write that succeeds (the disk is full): past this many, chunking stops
// for the rest of the run rather than holding more memory; readers then use the rows.
constexpr std::size_t kMaxReadyChunks = 256;

std::string insert_sql(std::string_view table, std::span<const Column> columns,
                       std::size_t rows = 1) {
  std::string sql =
      "INSERT INTO " + std::string(table) + " (run_id, " + column_names(columns) + ") VALUES ";
  const std::string tuple = "(" + placeholders(columns.size() + 1) + ")";
  for (std::size_t i = 0; i < rows; ++i) sql += i == 0 ? tuple : ", " + tuple;
  return sql;
}

// Which metrics are stored as INTEGER (bound with bind_int64 so counters stay exact).
const std::bitset<kMetricCount>& integer_metrics() {
  static const auto mask = [] {
    std::bitset<kMetricCount> out;
    for (std::size_t i = 0; i < kStoredMetricCount; ++i) {
      out[i] = kMetrics[i].storage == MetricStorage::Integer;
    }
    return out;
  }();
  return mask;
}

// INTEGER columns hold counters up to 2^63; a double beyond that (a driver glitch) is kept as
// REAL rather than wrapped, since SQLite columns accept either.
void bind_integer(Statement& stmt, int index, double value) {
  if (std::fabs(value) < 9.2e18) {
    stmt.bind(index, static_cast<std::int64_t>(std::llround(value)));
  } else {
    stmt.bind(index, value);
  }
}

void bind_optional_integer(Statement& stmt, int index, const std::optional<double>& value) {
  if (value) {
    bind_integer(stmt, index, *value);
  } else {
    stmt.bind_null(index);
  }
}

}  // namespace

RowInserter::RowInserter(Database& db)
    : db_(db),
      begin_(db.prepare("BEGIN")),
      commit_(db.prepare("COMMIT")),
      insert_sample_(db.prepare(insert_sql("samples", sample_columns()))),
      insert_samples_(db.prepare(insert_sql("samples", sample_columns(), kSamplesPerInsert))),
      insert_power_(db.prepare(insert_sql("power_samples", power_columns()))),
      insert_event_(db.prepare(insert_sql("events", event_columns()))),
      insert_output_(db.prepare(insert_sql("output", output_columns()))),
      insert_process_(db.prepare(insert_sql("processes", process_columns()))),
      insert_process_sample_(db.prepare(insert_sql("process_samples", process_sample_columns()))),
      insert_phase_(db.prepare(insert_phase_sql())),
      insert_health_(db.prepare(insert_health_sql())),
      insert_node_domain_(db.prepare(insert_node_domain_sql())),
      insert_node_sample_(db.prepare(insert_node_sample_sql())),
      insert_node_cpu_time_(db.prepare(insert_node_cpu_time_sql())),
      sample_nulls_(kSampleParameters + 1, 1),  // parameters never bound are NULL
      samples_nulls_(kSampleParameters * kSamplesPerInsert + 1, 1),
      insert_chunk_(db) {
  if (sample_columns().size() + 1 != kSampleParameters) {
    throw std::logic_error("samples columns and RowInserter::kSampleParameters disagree");
  }
}

void RowInserter::write(std::int64_t run_id, const WriteBatch& batch) {
  if (batch.empty()) return;
  begin_.run();
  try {
    write_samples(run_id, batch);
    write_power(run_id, batch);
    write_events(run_id, batch);
    write_output(run_id, batch);
    write_processes(run_id, batch);
    write_phases(run_id, batch);
    write_health(run_id, batch);
    write_node(run_id, batch);
    for (const auto& chunk : chunks_.ready()) insert_chunk_.insert(run_id, chunk);
    commit_.run();
  } catch (const SqliteError&) {
    if (chunks_.ready().size() > kMaxReadyChunks) chunks_.give_up();
    // SQLite may already have rolled back (SQLITE_FULL does on some paths); only roll back
    // a transaction that is still open.
    if (sqlite3_get_autocommit(db_.handle()) == 0) {
      sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
    }
    throw;
  }
  // Committed: these rows may now go into chunks, written with the next batch.
  chunks_.ready().clear();
  for (const auto& row : batch.samples) {
    chunks_.add(row);
    ++committed_rows_[row.device_index];
  }
}

std::optional<std::string> RowInserter::finish(std::int64_t run_id) {
  chunks_.finish();
  if (chunks_.ready().empty() && committed_rows_.empty()) return std::nullopt;
  try {
    begin_.run();
    for (const auto& chunk : chunks_.ready()) insert_chunk_.insert(run_id, chunk);
    record_sample_counts(db_, run_id, {committed_rows_.begin(), committed_rows_.end()});
    commit_.run();
  } catch (const SqliteError& e) {
    if (sqlite3_get_autocommit(db_.handle()) == 0) {
      sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
    }
    chunks_.give_up();
    return e.what();
  }
  chunks_.ready().clear();
  return std::nullopt;
}

void RowInserter::write_samples(std::int64_t run_id, const WriteBatch& batch) {
  const auto& rows = batch.samples;
  std::size_t next = 0;
  for (; next + kSamplesPerInsert <= rows.size(); next += kSamplesPerInsert) {
    for (std::size_t r = 0; r < kSamplesPerInsert; ++r) {
      bind_sample(insert_samples_, samples_nulls_, static_cast<int>(r * kSampleParameters), run_id,
                  rows[next + r]);
    }
    insert_samples_.run();
  }
  for (; next < rows.size(); ++next) {
    bind_sample(insert_sample_, sample_nulls_, 0, run_id, rows[next]);
    insert_sample_.run();
  }
}

void RowInserter::bind_sample(Statement& stmt, std::vector<char>& nulls, int offset,
                              std::int64_t run_id, const SampleRow& row) {
  const auto& integer = integer_metrics();
  stmt.bind(offset + 1, run_id);
  stmt.bind(offset + 2, static_cast<std::int64_t>(row.device_index));
  stmt.bind(offset + 3, row.wall_ns);
  stmt.bind(offset + 4, row.mono_ns);
  const int first_metric = offset + 5;  // run_id, device_index, wall_ns, mono_ns, then metrics
  for (std::size_t i = 0; i < kStoredMetricCount; ++i) {
    const int index = first_metric + static_cast<int>(i);
    char& null = nulls[static_cast<std::size_t>(index)];
    if (!row.present.test(i)) {
      if (null == 0) stmt.bind_null(index);  // missing is NULL, never 0
      null = 1;
      continue;
    }
    null = 0;
    if (integer.test(i)) {
      bind_integer(stmt, index, row.values[i]);
    } else {
      stmt.bind(index, row.values[i]);
    }
  }
}

void RowInserter::write_power(std::int64_t run_id, const WriteBatch& batch) {
  Statement& stmt = insert_power_;
  for (const auto& row : batch.power_samples) {
    stmt.bind(1, run_id);
    stmt.bind(2, static_cast<std::int64_t>(row.device_index));
    stmt.bind(3, row.wall_ns);
    stmt.bind(4, row.mono_ns);
    stmt.bind(5, row.power_w);
    stmt.bind(6, row.power_instant_w);
    bind_optional_integer(stmt, 7, row.energy_mj);
    stmt.run();
  }
}

void RowInserter::write_events(std::int64_t run_id, const WriteBatch& batch) {
  Statement& stmt = insert_event_;
  for (const auto& e : batch.events) {
    stmt.bind(1, run_id);
    stmt.bind(2, e.wall_ns);
    stmt.bind(3, e.mono_ns);
    stmt.bind(4, e.device_index);
    stmt.bind(5, std::string(e.kind.text()));
    stmt.bind(6, e.detail);
    stmt.run();
  }
}

void RowInserter::write_output(std::int64_t run_id, const WriteBatch& batch) {
  Statement& stmt = insert_output_;
  for (const auto& o : batch.output) {
    stmt.bind(1, run_id);
    stmt.bind(2, o.wall_ns);
    stmt.bind(3, o.mono_ns);
    stmt.bind_static(4, stream_text(o.stream));
    stmt.bind(5, o.text);
    stmt.run();
  }
}

void RowInserter::write_processes(std::int64_t run_id, const WriteBatch& batch) {
  for (const auto& p : batch.processes) {
    Statement& stmt = insert_process_;
    int i = 0;
    stmt.bind(++i, run_id);
    stmt.bind(++i, std::int64_t{p.pid});
    stmt.bind(++i, p.start_ticks);
    stmt.bind(++i, p.first_wall_ns);
    stmt.bind(++i, p.first_mono_ns);
    stmt.bind(++i, p.command);
    stmt.bind(++i, p.command_line);
    stmt.bind(++i, p.uid);
    stmt.bind(++i, p.user);
    stmt.bind(++i, p.ppid);
    stmt.bind(++i, p.cgroup);
    stmt.bind(++i, p.container_id);
    stmt.bind(++i, p.container_runtime);
    stmt.bind(++i, p.pod_uid);
    stmt.bind(++i, p.pod_name);
    stmt.bind(++i, p.pod_namespace);
    stmt.bind(++i, p.slurm_job_id);
    stmt.bind(++i, p.slurm_step);
    stmt.bind(++i, p.launcher);
    stmt.bind(++i, p.rank);
    stmt.bind(++i, p.local_rank);
    stmt.bind(++i, p.in_job ? std::optional<int>(*p.in_job ? 1 : 0) : std::nullopt);
    stmt.run();
  }
  for (const auto& s : batch.process_samples) {
    Statement& stmt = insert_process_sample_;
    stmt.bind(1, run_id);
    stmt.bind(2, std::int64_t{s.device_index});
    stmt.bind(3, s.wall_ns);
    stmt.bind(4, s.mono_ns);
    stmt.bind(5, std::int64_t{s.pid});
    stmt.bind(6, s.used_memory_bytes);
    stmt.bind(7, s.sm_percent);
    stmt.bind(8, s.memory_percent);
    stmt.run();
  }
}

void RowInserter::write_phases(std::int64_t run_id, const WriteBatch& batch) {
  for (const auto& phase : batch.phases) {
    bind_phase(insert_phase_, run_id, phase);
    insert_phase_.run();
  }
}

void RowInserter::write_health(std::int64_t run_id, const WriteBatch& batch) {
  for (const auto& row : batch.health) {
    bind_health(insert_health_, run_id, row);
    insert_health_.run();
  }
}

void RowInserter::write_node(std::int64_t run_id, const WriteBatch& batch) {
  for (const auto& domain : batch.node_domains) {
    bind_node_domain(insert_node_domain_, run_id, domain);
    insert_node_domain_.run();
  }
  for (const auto& sample : batch.node_samples) {
    bind_node_sample(insert_node_sample_, run_id, sample);
    insert_node_sample_.run();
  }
  for (const auto& time : batch.node_cpu_times) {
    bind_node_cpu_time(insert_node_cpu_time_, run_id, time);
    insert_node_cpu_time_.run();
  }
}

}  // namespace gpuscope::store
