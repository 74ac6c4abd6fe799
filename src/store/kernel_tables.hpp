// The kernel trace tables of a run database (schema 1.2; docs/database.md, "Kernel trace"):
// trace_processes, cuda_devices, kernel_names, kernels and memory_ops, written by `gpuscope
// profile --trace-kernels` when the job ends, copied by merge, read by `gpuscope kernels`, the
// report and the Perfetto export.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/kernel_trace.hpp"
#include "store/schema.hpp"

namespace gpuscope::store {

class Database;
class Statement;

// The columns of each table after its leading run_id.
std::span<const Column> trace_process_columns();
std::span<const Column> cuda_device_columns();
std::span<const Column> kernel_name_columns();
std::span<const Column> kernel_columns();
std::span<const Column> memory_op_columns();

// The DDL of the five tables and their indexes (create_schema, and migrate() from 1.1).
std::string create_kernel_tables_sql();
// Whether the database (or an attached one, `schema`) has the kernel trace tables.
bool has_kernel_tables(Database& db, std::string_view schema = "main");

// Copies the trace of run `old_id` of the attached database "src" to run `new_id` of "main"
// (merge). Returns the kernels copied; 0 when "src" has no trace tables.
std::int64_t copy_kernel_trace(Database& db, std::int64_t old_id, std::int64_t new_id);

// Writes a run's trace into a run database that is already there (the profiled run's file).
// Opening upgrades an older file's schema to 1.2; everything added goes into one transaction,
// committed by commit(): a failure before leaves the file as it was.
class KernelTraceWriter {
 public:
  // Throws Error naming the file when it cannot be opened for writing or is no run database.
  static std::unique_ptr<KernelTraceWriter> open(const std::filesystem::path& path,
                                                 std::int64_t run_id);
  ~KernelTraceWriter();
  KernelTraceWriter(const KernelTraceWriter&) = delete;
  KernelTraceWriter& operator=(const KernelTraceWriter&) = delete;

  // The next free process number and name id of the run (1 for a run without a trace yet).
  std::int64_t next_process() const { return next_process_; }
  std::int64_t next_name_id() const { return next_name_id_; }

  void add(const TraceProcess& process);
  void add(const TraceDevice& device);
  void add(const TraceKernelName& name);
  void add(const TraceKernel& kernel);
  void add(const TraceMemoryOp& op);
  // Appends sentences to the run's problems (runs.problems).
  void add_run_problems(const std::vector<std::string>& problems);

  // Commits and folds the WAL into the file. Throws Error on failure (nothing is kept).
  void commit();

 private:
  struct Statements;
  KernelTraceWriter(std::unique_ptr<Database> db, std::filesystem::path path, std::int64_t run_id);

  std::unique_ptr<Database> db_;
  std::unique_ptr<Statements> statements_;
  std::filesystem::path path_;
  std::int64_t run_id_ = 0;
  std::int64_t next_process_ = 1;
  std::int64_t next_name_id_ = 1;
  bool committed_ = false;
};

// How kernels and memory operations are visited.
enum class TraceOrder {
  ByStart,         // start_mono_ns
  ByDeviceStream,  // device_index (NULL first), process, stream_id, then start_mono_ns
};

// Reads the kernel trace of a run database (read-only; an older file simply has none).
class KernelTraceReader {
 public:
  // Throws Error::usage when `path` is not a run database this gpuscope reads.
  static KernelTraceReader open(const std::filesystem::path& path);

  bool has_trace_tables() const { return has_tables_; }
  const std::filesystem::path& path() const { return path_; }

  std::vector<TraceProcess> processes(std::int64_t run_id) const;
  std::vector<TraceDevice> devices(std::int64_t run_id) const;
  std::vector<TraceKernelName> names(std::int64_t run_id) const;
  std::int64_t count_kernels(std::int64_t run_id) const;
  std::int64_t count_memory_ops(std::int64_t run_id) const;

  void for_each_kernel(std::int64_t run_id, TraceOrder order,
                       const std::function<void(const TraceKernel&)>& fn) const;
  void for_each_memory_op(std::int64_t run_id, TraceOrder order,
                          const std::function<void(const TraceMemoryOp&)>& fn) const;

 private:
  KernelTraceReader(std::shared_ptr<Database> db, std::filesystem::path path, bool has_tables)
      : db_(std::move(db)), path_(std::move(path)), has_tables_(has_tables) {}

  std::shared_ptr<Database> db_;
  std::filesystem::path path_;
  bool has_tables_ = false;
};

}  // namespace gpuscope::store
