// Pure summaries of GPU activity durations, with the semantics of nsys's cuda_gpu_kern_sum and
// cuda_gpu_mem_time_sum / cuda_gpu_mem_size_sum reports (docs/kernels.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace gpuscope::kernels {

// Statistics of a set of durations (ns), as nsys prints them.
struct DurationStats {
  std::int64_t count = 0;
  std::int64_t total_ns = 0;
  double avg_ns = 0;
  double median_ns = 0;  // the middle value; the mean of the two middle ones for an even count
  std::int64_t min_ns = 0;
  std::int64_t max_ns = 0;
  double stddev_ns = 0;  // sample standard deviation (n - 1); 0 for a single value
};

// The statistics of `durations` (any order; empty gives all zeros).
DurationStats summarize(std::vector<std::int64_t> durations);

// Durations collected per kernel name.
using KernelDurations = std::map<std::string, std::vector<std::int64_t>>;

// One row of cuda_gpu_kern_sum.
struct KernelRow {
  std::string name;
  double time_percent = 0;  // share of the total time of all kernels
  DurationStats stats;
};

// One row per name, by total time descending (then name ascending for ties).
std::vector<KernelRow> kernel_summary(const KernelDurations& kernels);

// One memory operation: a memcpy of some kind or a memset.
struct MemoryOp {
  std::int64_t duration_ns = 0;
  std::int64_t bytes = 0;
};

// Memory operations collected per operation name ("[CUDA memcpy Host-to-Device]", ...).
using MemoryOps = std::map<std::string, std::vector<MemoryOp>>;

// One row of the memory summary: time statistics and total bytes of one operation kind.
struct MemoryRow {
  std::string operation;
  double time_percent = 0;  // share of the total time of all memory operations
  DurationStats stats;
  std::int64_t total_bytes = 0;
};

// One row per operation, by total time descending (then operation ascending).
std::vector<MemoryRow> memory_summary(const MemoryOps& ops);

// Which name a kernel goes by: its demangled name or nsys's short name.
enum class NameColumn { Demangled, ShortName };

// The GPU activity of one source: an Nsight Systems export (ingest/nsys_export) or one run of a
// run database's kernel trace (kernels/run_database).
struct KernelReport {
  std::filesystem::path file;  // or "job.db (node1 rank 3)" for one run of several
  KernelDurations kernels;
  MemoryOps memory;
  bool has_kernel_table = false;
  std::vector<std::string> notes;  // e.g. "no kernels recorded", a name column that was missing
};

// The operation name nsys uses for a CUPTI memcpy kind (1 → "[CUDA memcpy Host-to-Device]").
std::string memcpy_operation(long long copy_kind);

// Appends `from`'s entries to `into` (summing several reports).
void append(KernelDurations& into, const KernelDurations& from);
void append(MemoryOps& into, const MemoryOps& from);

}  // namespace gpuscope::kernels
