// `gpuscope kernels`: nsys's cuda_gpu_kern_sum and a memcpy/memset summary of Nsight Systems
// SQLite exports (ingest/nsys_export) or of the kernel trace of run databases (profile
// --trace-kernels), summed over ranks or per rank (docs/kernels.md).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace gpuscope::app {

struct KernelsRun {
  std::vector<std::string> inputs;
  std::string names = "demangled";
  std::size_t top = 0;
  bool json = false;
  bool csv = false;
  bool per_rank = false;
  bool import = false;  // --import: the trace files profile left unimported
};

// Prints the summaries; returns the exit code. Throws Error (usage for bad input).
int run_kernels(const KernelsRun& o);

}  // namespace gpuscope::app
