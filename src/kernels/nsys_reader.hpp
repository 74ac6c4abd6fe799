// Reads the GPU activity of an Nsight Systems SQLite export (`nsys export --type sqlite` or
// `nsys profile --export sqlite`): kernel durations per name and memcpy/memset operations.
// Tolerates the schema differences between nsys versions by checking which tables and columns
// exist (docs/kernels.md).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kernels/summary.hpp"

namespace gpuscope::kernels {

// Which StringIds column names a kernel.
enum class NameColumn { demangled, short_name };

struct NsysExport {
  std::filesystem::path file;
  KernelDurations kernels;
  MemoryOps memory;
  bool has_kernel_table = false;
  std::vector<std::string> notes;  // e.g. "no kernels recorded", a name column that was missing
};

// Reads `file`. Throws gpuscope::Error (exit code 2) naming the file when it does not exist, is
// not an SQLite database, or holds no Nsight Systems tables; a missing or empty kernel table is
// not an error (a note).
NsysExport read_nsys_export(const std::filesystem::path& file, NameColumn names);

// The operation name nsys uses for a CUPTI memcpy kind (1 → "[CUDA memcpy Host-to-Device]").
std::string memcpy_operation(long long copy_kind);

}  // namespace gpuscope::kernels
