// Nsight Systems SQLite exports (`nsys export --type sqlite` or `nsys profile --export sqlite`):
// kernel durations per name and memcpy/memset operations, for `gpuscope kernels`. Tolerates the
// schema differences between nsys versions by checking which tables and columns exist
// (docs/kernels.md). An export holds a kernel trace and no GPU samples, so it is read into the
// kernel summaries' own KernelReport rather than into a run database (ARCHITECTURE.md).
#pragma once

#include <filesystem>

#include "kernels/summary.hpp"

namespace gpuscope::ingest {

// Reads `file`. Throws gpuscope::Error (exit code 2) naming the file when it does not exist, is
// not an SQLite database, or holds no Nsight Systems tables; a missing or empty kernel table is
// not an error (a note).
kernels::KernelReport read_nsys_export(const std::filesystem::path& file,
                                       kernels::NameColumn names);

}  // namespace gpuscope::ingest
