// The `gpuscope kernels` views: nsys-style text tables, JSON and CSV (docs/kernels.md).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/summary.hpp"

namespace gpuscope::kernels {

// The summary of one file (--per-rank) or of all files summed.
struct Summary {
  std::vector<std::string> files;  // the reports it covers
  std::vector<KernelRow> kernels;  // all kernels, by total time descending
  std::vector<MemoryRow> memory;
  std::vector<std::string> notes;
};

struct OutputOptions {
  std::size_t top = 0;  // 0: every kernel
  std::string names = "demangled";
  bool per_rank = false;
};

std::string text_view(const std::vector<Summary>& summaries, const OutputOptions& options);
std::string json_view(const std::vector<Summary>& summaries, const OutputOptions& options);
// One row per kernel and per memory operation; `file` is the report, or "all" when summed.
std::string csv_view(const std::vector<Summary>& summaries, const OutputOptions& options);

}  // namespace gpuscope::kernels
