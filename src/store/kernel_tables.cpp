#include "store/kernel_tables.hpp"

#include <fmt/format.h>

#include <array>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_text.hpp"
#include "store/run_file.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store/sqlite_errors.hpp"

namespace gpuscope::store {
namespace {

namespace fs = std::filesystem;

constexpr std::array kTraceProcessColumns = std::to_array<Column>({
    {"process", "INTEGER NOT NULL"},
    {"pid", "INTEGER NOT NULL"},
    {"host", "TEXT"},
    {"command", "TEXT"},
    {"cupti_version", "INTEGER"},
    {"clock", "TEXT NOT NULL CHECK (clock IN ('monotonic', 'calibrated'))"},
    {"calibrations", "INTEGER NOT NULL"},
    {"kernels", "INTEGER NOT NULL"},
    {"memory_ops", "INTEGER NOT NULL"},
    {"dropped_records", "INTEGER NOT NULL"},
    {"complete", "INTEGER NOT NULL"},
    {"problems", "TEXT NOT NULL DEFAULT '[]'"},  // JSON array of sentences
});

constexpr std::array kCudaDeviceColumns = std::to_array<Column>({
    {"process", "INTEGER NOT NULL"},
    {"cuda_device", "INTEGER NOT NULL"},
    {"device_index", "INTEGER"},
    {"uuid", "TEXT"},
    {"pci_bus_id", "TEXT"},
    {"name", "TEXT"},
});

constexpr std::array kKernelNameColumns = std::to_array<Column>({
    {"name_id", "INTEGER NOT NULL"},
    {"name", "TEXT NOT NULL"},
    {"demangled_name", "TEXT NOT NULL"},
    {"short_name", "TEXT NOT NULL"},
});

// kernels and memory_ops start with the same ten columns: where and when.
constexpr std::array kKernelColumns = std::to_array<Column>({
    {"device_index", "INTEGER"},
    {"process", "INTEGER NOT NULL"},
    {"cuda_device", "INTEGER NOT NULL"},
    {"context_id", "INTEGER NOT NULL"},
    {"stream_id", "INTEGER NOT NULL"},
    {"correlation_id", "INTEGER NOT NULL"},
    {"start_mono_ns", "INTEGER NOT NULL"},
    {"end_mono_ns", "INTEGER NOT NULL"},
    {"start_wall_ns", "INTEGER NOT NULL"},
    {"end_wall_ns", "INTEGER NOT NULL"},
    {"name_id", "INTEGER NOT NULL"},
    {"grid_x", "INTEGER"},
    {"grid_y", "INTEGER"},
    {"grid_z", "INTEGER"},
    {"block_x", "INTEGER"},
    {"block_y", "INTEGER"},
    {"block_z", "INTEGER"},
    {"registers_per_thread", "INTEGER"},
    {"static_shared_bytes", "INTEGER"},
    {"dynamic_shared_bytes", "INTEGER"},
});

constexpr std::array kMemoryOpColumns = std::to_array<Column>({
    {"device_index", "INTEGER"},
    {"process", "INTEGER NOT NULL"},
    {"cuda_device", "INTEGER NOT NULL"},
    {"context_id", "INTEGER NOT NULL"},
    {"stream_id", "INTEGER NOT NULL"},
    {"correlation_id", "INTEGER NOT NULL"},
    {"start_mono_ns", "INTEGER NOT NULL"},
    {"end_mono_ns", "INTEGER NOT NULL"},
    {"start_wall_ns", "INTEGER NOT NULL"},
    {"end_wall_ns", "INTEGER NOT NULL"},
    {"operation", "TEXT NOT NULL CHECK (operation IN ('memcpy', 'memset'))"},
    {"copy_kind", "INTEGER"},
    {"src_kind", "INTEGER"},
    {"dst_kind", "INTEGER"},
    {"bytes", "INTEGER NOT NULL"},
    {"value", "INTEGER"},
});

constexpr std::string_view kRunRef = "run_id INTEGER NOT NULL REFERENCES runs (run_id)";

std::string create_table(std::string_view table, std::span<const Column> columns,
                         std::string_view trailer = {}) {
  std::string sql = fmt::format("CREATE TABLE {} (\n  {}", table, kRunRef);
  for (const auto& c : columns) sql += fmt::format(",\n  {} {}", c.name, c.declaration);
  sql += trailer;
  sql += "\n);\n";
  return sql;
}

std::string insert_sql(std::string_view table, std::span<const Column> columns) {
  return fmt::format("INSERT INTO {} (run_id, {}) VALUES ({})", table, column_names(columns),
                     placeholders(columns.size() + 1));
}

std::optional<std::int64_t> optional_index(const std::optional<unsigned>& index) {
  return index ? std::optional<std::int64_t>(*index) : std::nullopt;
}

// Binds the place and times (columns 2..11 after run_id); returns the next parameter.
int bind_place(Statement& s, const TracePlace& p, const TraceTimes& t) {
  s.bind(2, optional_index(p.device_index));
  s.bind(3, p.process);
  s.bind(4, std::int64_t{p.cuda_device});
  s.bind(5, std::int64_t{p.context_id});
  s.bind(6, std::int64_t{p.stream_id});
  s.bind(7, std::int64_t{p.correlation_id});
  s.bind(8, t.start_mono_ns);
  s.bind(9, t.end_mono_ns);
  s.bind(10, t.start_wall_ns);
  s.bind(11, t.end_wall_ns);
  return 12;
}

// Reads the place and times from columns 0..9 of a SELECT of the place columns.
int read_place(const Statement& s, TracePlace& p, TraceTimes& t) {
  if (auto index = s.opt_int64(0)) {
    p.device_index = static_cast<unsigned>(*index);
  } else {
    p.device_index.reset();
  }
  p.process = s.int64(1);
  p.cuda_device = static_cast<std::uint32_t>(s.int64(2));
  p.context_id = static_cast<std::uint32_t>(s.int64(3));
  p.stream_id = static_cast<std::uint32_t>(s.int64(4));
  p.correlation_id = static_cast<std::uint32_t>(s.int64(5));
  t.start_mono_ns = s.int64(6);
  t.end_mono_ns = s.int64(7);
  t.start_wall_ns = s.int64(8);
  t.end_wall_ns = s.int64(9);
  return 10;
}

std::string order_sql(TraceOrder order) {
  return order == TraceOrder::ByStart ? "start_mono_ns, device_index, stream_id"
                                      : "device_index, process, stream_id, start_mono_ns";
}

}  // namespace

std::span<const Column> trace_process_columns() {
  return kTraceProcessColumns;
}
std::span<const Column> cuda_device_columns() {
  return kCudaDeviceColumns;
}
std::span<const Column> kernel_name_columns() {
  return kKernelNameColumns;
}
std::span<const Column> kernel_columns() {
  return kKernelColumns;
}
std::span<const Column> memory_op_columns() {
  return kMemoryOpColumns;
}

std::string create_kernel_tables_sql() {
  std::string sql;
  sql +=
      create_table("trace_processes", kTraceProcessColumns, ",\n  PRIMARY KEY (run_id, process)");
  sql += create_table("cuda_devices", kCudaDeviceColumns,
                      ",\n  PRIMARY KEY (run_id, process, cuda_device)");
  sql += create_table("kernel_names", kKernelNameColumns, ",\n  PRIMARY KEY (run_id, name_id)");
  sql += create_table("kernels", kKernelColumns);
  sql += create_table("memory_ops", kMemoryOpColumns);
  sql += "CREATE INDEX kernels_by_device ON kernels (run_id, device_index, start_mono_ns);\n";
  sql += "CREATE INDEX memory_ops_by_device ON memory_ops (run_id, device_index, start_mono_ns);\n";
  return sql;
}

bool has_kernel_tables(Database& db, std::string_view schema) {
  Statement stmt = db.prepare(
      fmt::format("SELECT count(*) FROM {}.sqlite_schema WHERE type = 'table' AND name IN "
                  "('trace_processes', 'cuda_devices', 'kernel_names', 'kernels', 'memory_ops')",
                  schema));
  return stmt.step() && stmt.int64(0) == 5;
}

std::int64_t copy_kernel_trace(Database& db, std::int64_t old_id, std::int64_t new_id) {
  if (!has_kernel_tables(db, "src")) return 0;
  std::int64_t kernels = 0;
  for (const auto& [table, columns] :
       {std::pair{"trace_processes", trace_process_columns()},
        std::pair{"cuda_devices", cuda_device_columns()},
        std::pair{"kernel_names", kernel_name_columns()}, std::pair{"kernels", kernel_columns()},
        std::pair{"memory_ops", memory_op_columns()}}) {
    const std::int64_t copied = copy_run_rows(db, table, columns, old_id, new_id);
    if (std::string_view(table) == "kernels") kernels = copied;
  }
  return kernels;
}

// --- writing ---

struct KernelTraceWriter::Statements {
  Statement process;
  Statement device;
  Statement name;
  Statement kernel;
  Statement memory_op;
};

std::unique_ptr<KernelTraceWriter> KernelTraceWriter::open(const fs::path& path,
                                                           std::int64_t run_id) {
  const std::string name = path.string();
  auto db = translate_sqlite_errors("cannot open " + name + " to add the kernel trace",
                                    "check the file and its directory are writable", [&] {
                                      auto opened = std::make_unique<Database>(
                                          path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX);
                                      sqlite3_busy_timeout(opened->handle(), 5000);
                                      return opened;
                                    });
  const int version = check_run_database(*db, path);
  return translate_sqlite_errors("cannot add the kernel trace to " + name, "check the disk", [&] {
    migrate(*db, version);  // a 1.1 file gets the trace tables
    return std::unique_ptr<KernelTraceWriter>(new KernelTraceWriter(std::move(db), path, run_id));
  });
}

KernelTraceWriter::KernelTraceWriter(std::unique_ptr<Database> db, fs::path path,
                                     std::int64_t run_id)
    : db_(std::move(db)), path_(std::move(path)), run_id_(run_id) {
  db_->exec("BEGIN IMMEDIATE");
  statements_ = std::unique_ptr<Statements>(
      new Statements{db_->prepare(insert_sql("trace_processes", kTraceProcessColumns)),
                     db_->prepare(insert_sql("cuda_devices", kCudaDeviceColumns)),
                     db_->prepare(insert_sql("kernel_names", kKernelNameColumns)),
                     db_->prepare(insert_sql("kernels", kKernelColumns)),
                     db_->prepare(insert_sql("memory_ops", kMemoryOpColumns))});
  Statement next = db_->prepare(
      "SELECT (SELECT coalesce(max(process), 0) + 1 FROM trace_processes WHERE run_id = ?1), "
      "(SELECT coalesce(max(name_id), 0) + 1 FROM kernel_names WHERE run_id = ?1)");
  next.bind(1, run_id_);
  if (next.step()) {
    next_process_ = next.int64(0);
    next_name_id_ = next.int64(1);
  }
}

KernelTraceWriter::~KernelTraceWriter() {
  statements_.reset();
  if (!committed_ && db_ && sqlite3_get_autocommit(db_->handle()) == 0) {
    try {
      db_->exec("ROLLBACK");
    } catch (const SqliteError&) {
      // The connection closes next; SQLite rolls back what was not committed.
    }
  }
}

void KernelTraceWriter::add(const TraceProcess& p) {
  Statement& s = statements_->process;
  s.bind(1, run_id_);
  s.bind(2, p.process);
  s.bind(3, p.pid);
  s.bind(4, p.host);
  s.bind(5, p.command);
  s.bind(6, p.cupti_version);
  s.bind(7, p.clock);
  s.bind(8, p.calibrations);
  s.bind(9, p.kernels);
  s.bind(10, p.memory_ops);
  s.bind(11, p.dropped_records);
  s.bind(12, std::int64_t{p.complete ? 1 : 0});
  s.bind(13, json_text(nlohmann::json(p.problems)));
  s.run();
  next_process_ = std::max(next_process_, p.process + 1);
}

void KernelTraceWriter::add(const TraceDevice& d) {
  Statement& s = statements_->device;
  s.bind(1, run_id_);
  s.bind(2, d.process);
  s.bind(3, std::int64_t{d.cuda_device});
  s.bind(4, optional_index(d.device_index));
  s.bind(5, d.uuid);
  s.bind(6, d.pci_bus_id);
  s.bind(7, d.name);
  s.run();
}

void KernelTraceWriter::add(const TraceKernelName& n) {
  Statement& s = statements_->name;
  s.bind(1, run_id_);
  s.bind(2, n.name_id);
  s.bind(3, n.name);
  s.bind(4, n.demangled);
  s.bind(5, n.short_name);
  s.run();
  next_name_id_ = std::max(next_name_id_, n.name_id + 1);
}

void KernelTraceWriter::add(const TraceKernel& k) {
  Statement& s = statements_->kernel;
  s.bind(1, run_id_);
  int i = bind_place(s, k.place, k.times);
  s.bind(i++, k.name_id);
  for (std::int32_t v : k.grid) s.bind(i++, std::int64_t{v});
  for (std::int32_t v : k.block) s.bind(i++, std::int64_t{v});
  s.bind(i++, std::int64_t{k.registers_per_thread});
  s.bind(i++, std::int64_t{k.static_shared_bytes});
  s.bind(i, std::int64_t{k.dynamic_shared_bytes});
  s.run();
}

void KernelTraceWriter::add(const TraceMemoryOp& m) {
  Statement& s = statements_->memory_op;
  s.bind(1, run_id_);
  int i = bind_place(s, m.place, m.times);
  s.bind(i++, std::string(m.memset ? "memset" : "memcpy"));
  if (m.memset) {
    s.bind_null(i++);
    s.bind_null(i++);
    s.bind(i++, std::int64_t{m.dst_kind});
  } else {
    s.bind(i++, std::int64_t{m.copy_kind});
    s.bind(i++, std::int64_t{m.src_kind});
    s.bind(i++, std::int64_t{m.dst_kind});
  }
  s.bind(i++, m.bytes);
  if (m.memset) {
    s.bind(i, m.value);
  } else {
    s.bind_null(i);
  }
  s.run();
}

void KernelTraceWriter::add_run_problems(const std::vector<std::string>& problems) {
  if (problems.empty()) return;
  Statement read = db_->prepare("SELECT problems FROM runs WHERE run_id = ?");
  read.bind(1, run_id_);
  if (!read.step()) return;
  nlohmann::json all = nlohmann::json::parse(read.text(0), nullptr, false);
  if (!all.is_array()) all = nlohmann::json::array();
  for (const std::string& problem : problems) all.push_back(problem);
  Statement write = db_->prepare("UPDATE runs SET problems = ? WHERE run_id = ?");
  write.bind(1, json_text(all));
  write.bind(2, run_id_);
  write.run();
}

void KernelTraceWriter::commit() {
  translate_sqlite_errors("cannot add the kernel trace to " + path_.string(), "check the disk",
                          [&] {
                            statements_.reset();
                            db_->exec("COMMIT");
                            committed_ = true;
                          });
  if (auto problem = close_run_file(*db_, path_)) {
    throw Error("cannot finish " + path_.string(), *problem);
  }
}

// --- reading ---

KernelTraceReader KernelTraceReader::open(const fs::path& path) {
  std::shared_ptr<Database> db = open_run_database(path);
  const bool tables = has_kernel_tables(*db);
  return KernelTraceReader(std::move(db), path, tables);
}

std::vector<TraceProcess> KernelTraceReader::processes(std::int64_t run_id) const {
  std::vector<TraceProcess> out;
  if (!has_tables_) return out;
  Statement s =
      db_->prepare(fmt::format("SELECT {} FROM trace_processes WHERE run_id = ? ORDER BY process",
                               column_names(kTraceProcessColumns)));
  s.bind(1, run_id);
  while (s.step()) {
    TraceProcess p;
    p.process = s.int64(0);
    p.pid = s.int64(1);
    p.host = s.opt_text(2).value_or("");
    p.command = s.opt_text(3).value_or("");
    p.cupti_version = s.opt_int64(4).value_or(0);
    p.clock = s.text(5);
    p.calibrations = s.int64(6);
    p.kernels = s.int64(7);
    p.memory_ops = s.int64(8);
    p.dropped_records = s.int64(9);
    p.complete = s.int64(10) != 0;
    const auto problems = nlohmann::json::parse(s.text(11), nullptr, false);
    if (problems.is_array()) {
      for (const auto& item : problems) {
        if (item.is_string()) p.problems.push_back(item.get<std::string>());
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<TraceDevice> KernelTraceReader::devices(std::int64_t run_id) const {
  std::vector<TraceDevice> out;
  if (!has_tables_) return out;
  Statement s = db_->prepare(
      fmt::format("SELECT {} FROM cuda_devices WHERE run_id = ? ORDER BY process, cuda_device",
                  column_names(kCudaDeviceColumns)));
  s.bind(1, run_id);
  while (s.step()) {
    TraceDevice d;
    d.process = s.int64(0);
    d.cuda_device = static_cast<std::uint32_t>(s.int64(1));
    if (auto index = s.opt_int64(2)) d.device_index = static_cast<unsigned>(*index);
    d.uuid = s.opt_text(3);
    d.pci_bus_id = s.opt_text(4);
    d.name = s.opt_text(5).value_or("");
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<TraceKernelName> KernelTraceReader::names(std::int64_t run_id) const {
  std::vector<TraceKernelName> out;
  if (!has_tables_) return out;
  Statement s =
      db_->prepare(fmt::format("SELECT {} FROM kernel_names WHERE run_id = ? ORDER BY name_id",
                               column_names(kKernelNameColumns)));
  s.bind(1, run_id);
  while (s.step()) {
    out.push_back({s.int64(0), s.text(1), s.text(2), s.text(3)});
  }
  return out;
}

std::int64_t KernelTraceReader::count_kernels(std::int64_t run_id) const {
  if (!has_tables_) return 0;
  Statement s = db_->prepare("SELECT count(*) FROM kernels WHERE run_id = ?");
  s.bind(1, run_id);
  return s.step() ? s.int64(0) : 0;
}

std::int64_t KernelTraceReader::count_memory_ops(std::int64_t run_id) const {
  if (!has_tables_) return 0;
  Statement s = db_->prepare("SELECT count(*) FROM memory_ops WHERE run_id = ?");
  s.bind(1, run_id);
  return s.step() ? s.int64(0) : 0;
}

void KernelTraceReader::for_each_kernel(std::int64_t run_id, TraceOrder order,
                                        const std::function<void(const TraceKernel&)>& fn) const {
  if (!has_tables_) return;
  Statement s = db_->prepare(fmt::format("SELECT {} FROM kernels WHERE run_id = ? ORDER BY {}",
                                         column_names(kKernelColumns), order_sql(order)));
  s.bind(1, run_id);
  TraceKernel k;
  translate_sqlite_errors("cannot read the kernels of " + path_.string(), {}, [&] {
    while (s.step()) {
      int i = read_place(s, k.place, k.times);
      k.name_id = s.int64(i++);
      for (std::int32_t& v : k.grid) v = static_cast<std::int32_t>(s.int64(i++));
      for (std::int32_t& v : k.block) v = static_cast<std::int32_t>(s.int64(i++));
      k.registers_per_thread = static_cast<std::int32_t>(s.int64(i++));
      k.static_shared_bytes = static_cast<std::int32_t>(s.int64(i++));
      k.dynamic_shared_bytes = static_cast<std::int32_t>(s.int64(i));
      fn(k);
    }
  });
}

void KernelTraceReader::for_each_memory_op(
    std::int64_t run_id, TraceOrder order,
    const std::function<void(const TraceMemoryOp&)>& fn) const {
  if (!has_tables_) return;
  Statement s = db_->prepare(fmt::format("SELECT {} FROM memory_ops WHERE run_id = ? ORDER BY {}",
                                         column_names(kMemoryOpColumns), order_sql(order)));
  s.bind(1, run_id);
  TraceMemoryOp m;
  translate_sqlite_errors("cannot read the memory operations of " + path_.string(), {}, [&] {
    while (s.step()) {
      int i = read_place(s, m.place, m.times);
      m.memset = s.text(i++) == "memset";
      m.copy_kind = static_cast<std::int32_t>(s.opt_int64(i++).value_or(0));
      m.src_kind = static_cast<std::int32_t>(s.opt_int64(i++).value_or(0));
      m.dst_kind = static_cast<std::int32_t>(s.opt_int64(i++).value_or(0));
      m.bytes = s.int64(i++);
      m.value = s.opt_int64(i).value_or(0);
      fn(m);
    }
  });
}

}  // namespace gpuscope::store
