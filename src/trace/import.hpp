// Importing the sidecar files of a traced job into its run database (docs/kernels.md): each
// file becomes a trace process; its CUDA devices are matched to the sampled GPUs by UUID or PCI
// address, its timestamps put on gpuscope's clocks (trace/clock_map.hpp), its kernel names
// demangled and shared across the run's processes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/device_description.hpp"

namespace gpuscope::trace {

struct ImportOptions {
  // The run's start_wall_ns − start_mono_ns: converts times of a process without calibration.
  std::int64_t wall_minus_mono_ns = 0;
  // Delete each imported file, and the directory when it is left empty.
  bool remove_imported = true;
  // Where NVTX ranges still open when their process died end (the job's end, CLOCK_MONOTONIC);
  // 0: at their last record's time.
  std::int64_t run_end_mono_ns = 0;
};

struct ImportSummary {
  int files = 0;  // sidecar files imported
  std::int64_t kernels = 0;
  std::int64_t memory_ops = 0;
  std::int64_t unmatched = 0;  // kernels and memory operations on GPUs gpuscope did not sample
  std::int64_t phases = 0;     // NVTX ranges and instants, into the phases table
  std::vector<std::string> problems;  // sentences for people (also in runs.problems)
};

// Imports every *.gstrace file of `dir` into run `run_id` of the run database `database`,
// whose sampled GPUs are `devices`, in one transaction; the sentences of `problems` are appended
// to the run's problems. Throws gpuscope::Error when the database cannot be written (nothing is
// imported and no file removed); a damaged sidecar file is skipped and said in the problems.
ImportSummary import_trace_dir(const std::filesystem::path& dir,
                               const std::filesystem::path& database, std::int64_t run_id,
                               const std::vector<DeviceDescription>& devices,
                               const ImportOptions& options = {});

}  // namespace gpuscope::trace
