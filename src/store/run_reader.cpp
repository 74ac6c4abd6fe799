#include "store/run_reader.hpp"

#include "core/error.hpp"
#include "core/metrics.hpp"
#include "store/chunk_io.hpp"
#include "store/health_tables.hpp"
#include "store/node_tables.hpp"
#include "store/phase_tables.hpp"
#include "store/run_file.hpp"
#include "store/run_rows.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store/sqlite_errors.hpp"

namespace gpuscope::store {
namespace {

// Every SELECT below lists run_id first, then the table's columns in schema order.
void decode(const Statement& row, RunSample& out) {
  constexpr int kFirstMetric = 4;  // run_id, device_index, wall_ns, mono_ns
  out.run_id = row.int64(0);
  SampleRow& s = out.row;
  s.device_index = static_cast<unsigned>(row.int64(1));
  s.wall_ns = row.int64(2);
  s.mono_ns = row.int64(3);
  for (std::size_t i = 0; i < kStoredMetricCount; ++i) {
    const int column = kFirstMetric + static_cast<int>(i);
    // NULL reads as 0.0, so only a 0 needs the type check: half the SQLite calls per value.
    s.values[i] = row.real(column);  // exact for INTEGER values below 2^53
    s.present.set(i, s.values[i] != 0.0 || !row.is_null(column));
  }
}

void decode(const Statement& row, RunPowerSample& out) {
  out.run_id = row.int64(0);
  out.row.device_index = static_cast<unsigned>(row.int64(1));
  out.row.wall_ns = row.int64(2);
  out.row.mono_ns = row.int64(3);
  out.row.power_w = row.opt_real(4);
  out.row.power_instant_w = row.opt_real(5);
  out.row.energy_mj = row.opt_real(6);
}

void decode(const Statement& row, RunEvent& out) {
  out.run_id = row.int64(0);
  out.event.wall_ns = row.int64(1);
  out.event.mono_ns = row.int64(2);
  if (auto device = row.opt_int64(3)) {
    out.event.device_index = static_cast<unsigned>(*device);
  } else {
    out.event.device_index.reset();
  }
  out.event.kind = EventKind::parse(row.text(4));
  out.event.detail = row.text(5);
}

void decode(const Statement& row, RunOutputLine& out) {
  out.run_id = row.int64(0);
  out.line.wall_ns = row.int64(1);
  out.line.mono_ns = row.int64(2);
  out.line.stream = row.text(3) == "stderr" ? OutputStream::Stderr : OutputStream::Stdout;
  out.line.text = row.text(4);
}

// Conditions are added only when set, so SQLite can seek the (run_id, device_index, mono_ns)
// index instead of scanning it.
std::string where_clause(const RowFilter& filter, bool by_device) {
  std::string out;
  if (filter.run_id) out += " WHERE run_id = :run_id";
  if (by_device && filter.device_index) {
    out += out.empty() ? " WHERE " : " AND ";
    out += "device_index = :device_index";
  }
  return out;
}

void bind_filter(Statement& stmt, const RowFilter& filter, bool by_device) {
  if (filter.run_id) stmt.bind(stmt.parameter("run_id"), *filter.run_id);
  if (by_device && filter.device_index) {
    stmt.bind(stmt.parameter("device_index"), std::int64_t{*filter.device_index});
  }
}

// Runs `read`; a SQLite failure becomes "cannot read PATH (SQLite's words); check that the
// file is complete": the one translation of the reader's SQLite errors.
template <typename Read>
decltype(auto) read_or_explain(const std::filesystem::path& path, Read&& read) {
  return translate_sqlite_errors("cannot read " + path.string(), "check that the file is complete",
                                 std::forward<Read>(read));
}

}  // namespace

template <typename Record>
Cursor<Record>::Cursor(std::shared_ptr<Database> db, std::unique_ptr<Statement> stmt,
                       std::string path)
    : db_(std::move(db)), stmt_(std::move(stmt)), path_(std::move(path)) {}

template <typename Record>
Cursor<Record>::~Cursor() = default;
template <typename Record>
Cursor<Record>::Cursor(Cursor&&) noexcept = default;
template <typename Record>
Cursor<Record>& Cursor<Record>::operator=(Cursor&&) noexcept = default;

template <typename Record>
bool Cursor<Record>::next(Record& out) {
  if (!read_or_explain(path_, [&] { return stmt_->step(); })) return false;
  decode(*stmt_, out);
  return true;
}

template class Cursor<RunSample>;
template class Cursor<RunPowerSample>;
template class Cursor<RunEvent>;
template class Cursor<RunOutputLine>;

RunReader RunReader::open(const std::filesystem::path& path) {
  int version = 0;
  std::shared_ptr<Database> db = open_run_database(path, &version);
  return RunReader(std::move(db), path, version);
}

RunReader::RunReader(std::shared_ptr<Database> db, std::filesystem::path path, int schema_version)
    : db_(std::move(db)), path_(std::move(path)), schema_version_(schema_version) {
  read_or_explain(path_, [&] {
    schema_minor_version_ = store::schema_minor_version(*db_);
    has_chunks_ = store::has_sample_chunks(*db_);
  });
}

RunReader::ReadTransaction::ReadTransaction(const RunReader& reader) : db_(reader.db_.get()) {
  try {
    db_->exec("BEGIN");
    open_ = true;
  } catch (const SqliteError&) {
    // Reading works without it, one transaction per statement.
  }
}

RunReader::ReadTransaction::~ReadTransaction() {
  if (!open_) return;
  try {
    db_->exec("COMMIT");
  } catch (const SqliteError&) {
    // Nothing was written; the connection ends the transaction when it closes.
  }
}

SamplePlan RunReader::sample_plan(std::int64_t run_id, unsigned device_index, bool use_chunks,
                                  std::optional<std::int64_t> known_rows) const {
  return read_or_explain(path_, [&] {
    return plan_samples(*db_, "main", run_id, device_index, use_chunks && has_chunks_, known_rows);
  });
}

std::vector<std::pair<unsigned, std::int64_t>> RunReader::samples_per_device(
    std::int64_t run_id) const {
  return read_or_explain(path_, [&] { return store::samples_per_device(*db_, "main", run_id); });
}

void RunReader::read_samples(const SamplePlan& plan, std::span<const Metric> metrics,
                             SampleColumns& out) const {
  std::bitset<kMetricCount> wanted;
  for (Metric m : metrics) wanted.set(static_cast<std::size_t>(m));
  return read_or_explain(path_, [&] { store::read_samples(*db_, "main", plan, wanted, out); });
}

std::vector<StoredRun> RunReader::runs() const {
  return read_or_explain(path_, [&] {
    Statement stmt = db_->prepare(select_runs_sql(*db_) + " ORDER BY run_id");
    std::vector<StoredRun> out;
    while (stmt.step()) out.push_back(read_run(stmt));
    return out;
  });
}

std::vector<DeviceDescription> RunReader::devices(std::int64_t run_id) const {
  return read_or_explain(path_, [&] {
    Statement stmt =
        db_->prepare(select_devices_sql(*db_) + " WHERE run_id = ? ORDER BY device_index");
    stmt.bind(1, run_id);
    std::vector<DeviceDescription> out;
    while (stmt.step()) out.push_back(read_device(stmt));
    return out;
  });
}

std::vector<Phase> RunReader::phases(std::int64_t run_id) const {
  return read_or_explain(path_, [&] { return read_phases(*db_, run_id); });
}

void RunReader::for_each_phase(std::int64_t run_id, const std::function<void(Phase&&)>& fn) const {
  read_or_explain(path_, [&] {
    store::for_each_phase(*db_, run_id, fn);
    return 0;
  });
}

std::vector<HealthRow> RunReader::health_samples(std::int64_t run_id) const {
  return read_or_explain(path_, [&] { return read_health_samples(*db_, run_id); });
}

std::vector<NodeEnergyDomain> RunReader::node_domains(std::int64_t run_id) const {
  return read_or_explain(path_, [&] { return read_node_domains(*db_, run_id); });
}

std::vector<NodeEnergySample> RunReader::node_samples(std::int64_t run_id) const {
  return read_or_explain(path_, [&] { return read_node_samples(*db_, run_id); });
}

std::vector<NodeCpuTime> RunReader::node_cpu_times(std::int64_t run_id) const {
  return read_or_explain(path_, [&] { return read_node_cpu_times(*db_, run_id); });
}

std::vector<GpuProcess> RunReader::processes(std::int64_t run_id) const {
  return read_or_explain(path_, [&] {
    std::vector<GpuProcess> out;
    if (!has_table(*db_, "processes")) return out;
    Statement stmt = db_->prepare("SELECT " + column_names(process_columns()) +
                                  " FROM processes WHERE run_id = ? ORDER BY first_mono_ns, rowid");
    stmt.bind(1, run_id);
    auto opt_unsigned = [&](int i) -> std::optional<unsigned> {
      auto v = stmt.opt_int64(i);
      return v && *v >= 0 ? std::optional<unsigned>(static_cast<unsigned>(*v)) : std::nullopt;
    };
    auto opt_int = [&](int i) -> std::optional<int> {
      auto v = stmt.opt_int64(i);
      return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
    };
    while (stmt.step()) {
      GpuProcess p;
      int i = 0;
      p.pid = opt_unsigned(i++).value_or(0);
      if (auto ticks = stmt.opt_int64(i++)) p.start_ticks = static_cast<std::uint64_t>(*ticks);
      p.first_wall_ns = stmt.int64(i++);
      p.first_mono_ns = stmt.int64(i++);
      p.command = stmt.opt_text(i++);
      p.command_line = stmt.opt_text(i++);
      p.uid = opt_unsigned(i++);
      p.user = stmt.opt_text(i++);
      p.ppid = opt_unsigned(i++);
      p.cgroup = stmt.opt_text(i++);
      p.container_id = stmt.opt_text(i++);
      p.container_runtime = stmt.opt_text(i++);
      p.pod_uid = stmt.opt_text(i++);
      p.pod_name = stmt.opt_text(i++);
      p.pod_namespace = stmt.opt_text(i++);
      p.slurm_job_id = stmt.opt_text(i++);
      p.slurm_step = stmt.opt_text(i++);
      p.launcher = stmt.opt_text(i++);
      p.rank = opt_int(i++);
      p.local_rank = opt_int(i++);
      if (auto in_job = stmt.opt_int64(i++)) p.in_job = *in_job != 0;
      out.push_back(std::move(p));
    }
    return out;
  });
}

std::vector<ProcessSample> RunReader::process_samples(std::int64_t run_id) const {
  return read_or_explain(path_, [&] {
    std::vector<ProcessSample> out;
    if (!has_table(*db_, "process_samples")) return out;
    Statement stmt = db_->prepare("SELECT " + column_names(process_sample_columns()) +
                                  " FROM process_samples WHERE run_id = ? ORDER BY device_index, "
                                  "mono_ns, rowid");
    stmt.bind(1, run_id);
    while (stmt.step()) {
      ProcessSample s;
      s.device_index = static_cast<unsigned>(stmt.int64(0));
      s.wall_ns = stmt.int64(1);
      s.mono_ns = stmt.int64(2);
      s.pid = static_cast<unsigned>(stmt.int64(3));
      if (auto bytes = stmt.opt_int64(4); bytes && *bytes >= 0) {
        s.used_memory_bytes = static_cast<std::uint64_t>(*bytes);
      }
      s.sm_percent = stmt.opt_real(5);
      s.memory_percent = stmt.opt_real(6);
      out.push_back(s);
    }
    return out;
  });
}

std::vector<StoredMetric> RunReader::metrics() const {
  return read_or_explain(path_, [&] {
    Statement stmt = db_->prepare(
        "SELECT name, unit, kind, storage, source, description FROM metrics ORDER BY position");
    std::vector<StoredMetric> out;
    while (stmt.step()) {
      out.push_back(
          {stmt.text(0), stmt.text(1), stmt.text(2), stmt.text(3), stmt.text(4), stmt.text(5)});
    }
    return out;
  });
}

template <typename Record>
Cursor<Record> RunReader::query(std::string_view table, std::span<const Column> columns,
                                const RowFilter& filter, bool by_device,
                                std::string_view order) const {
  const std::string sql = "SELECT run_id, " + column_names(columns) + " FROM " +
                          std::string(table) + where_clause(filter, by_device) + " ORDER BY " +
                          std::string(order);
  return read_or_explain(path_, [&] {
    auto stmt = std::make_unique<Statement>(db_->prepare(sql));
    bind_filter(*stmt, filter, by_device);
    return Cursor<Record>(db_, std::move(stmt), path_.string());
  });
}

SampleCursor RunReader::samples(const RowFilter& filter) const {
  static const std::vector<Metric> every = [] {
    std::vector<Metric> out;
    for (std::size_t i = 0; i < kStoredMetricCount; ++i) out.push_back(static_cast<Metric>(i));
    return out;
  }();
  return samples(filter, every);
}

SampleCursor RunReader::samples(const RowFilter& filter, std::span<const Metric> only) const {
  // Unwanted metric columns, and those an older file lacks, are selected as NULL literals, so
  // decoding stays the same and SQLite skips extracting them.
  std::bitset<kMetricCount> wanted;
  for (Metric m : only) wanted.set(static_cast<std::size_t>(m));
  wanted &= read_or_explain(path_, [&] { return stored_metric_columns(*db_, "main"); });
  std::vector<Column> columns = sample_columns();
  constexpr std::size_t kFirstMetric = 3;  // device_index, wall_ns, mono_ns
  for (std::size_t i = 0; i < kStoredMetricCount; ++i) {
    if (!wanted.test(i)) columns[kFirstMetric + i].name = "NULL";
  }
  return query<RunSample>("samples", columns, filter, true, "run_id, device_index, mono_ns");
}

PowerSampleCursor RunReader::power_samples(const RowFilter& filter) const {
  return query<RunPowerSample>("power_samples", power_columns(), filter, true,
                               "run_id, device_index, mono_ns");
}

EventCursor RunReader::events(const RowFilter& filter) const {
  return query<RunEvent>("events", event_columns(), filter, false, "run_id, mono_ns, rowid");
}

OutputCursor RunReader::output(const RowFilter& filter) const {
  return query<RunOutputLine>("output", output_columns(), filter, false, "run_id, mono_ns, rowid");
}

std::int64_t RunReader::count_samples(const RowFilter& filter) const {
  return read_or_explain(path_, [&] {
    Statement stmt = db_->prepare("SELECT count(*) FROM samples" + where_clause(filter, true));
    bind_filter(stmt, filter, true);
    stmt.step();
    return stmt.int64(0);
  });
}

}  // namespace gpuscope::store
