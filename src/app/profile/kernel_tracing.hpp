// `gpuscope profile --trace-kernels` (docs/kernels.md): before the job, find the CUPTI injection
// library and make the trace directory; for the job, the environment that makes CUDA load the
// library; after it, the import of what its processes wrote into the run database.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/device_description.hpp"

namespace gpuscope::app {

struct KernelTracing {
  std::filesystem::path library;  // libgpuscope_cupti.so
  std::filesystem::path dir;      // <run database>.trace/: one sidecar file per CUDA process
  bool kernels = true;            // --trace-kernels: kernels, memcpy, memset (and NVTX ranges)
  bool nvtx = true;               // NVTX ranges (--trace-nvtx alone: only them)
};

// The library gpuscope uses: $GPUSCOPE_CUPTI_LIBRARY, else lib/gpuscope/libgpuscope_cupti.so
// beside the executable.
std::filesystem::path cupti_library_path();

// The directory the sidecar files of the run database `database` go to.
std::filesystem::path trace_dir_for(const std::filesystem::path& database);

// Throws Error::usage saying why and what to do when the library is not there (this gpuscope
// was built without CUPTI, or the file was removed); returns its absolute path.
std::filesystem::path require_cupti_library();

// Checks the library is there and creates the trace directory (removing an old one's sidecar
// files when `overwrite`). Throws Error::usage saying why and what to do: no library (this
// gpuscope was built without CUPTI, or it was removed), or trace files of an earlier run left.
KernelTracing prepare_kernel_tracing(const std::filesystem::path& database, bool overwrite);

// CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH (when NVTX ranges are traced), GPUSCOPE_TRACE_DIR
// and GPUSCOPE_TRACE_KINDS for the job.
std::map<std::string, std::string> tracing_environment(const KernelTracing& tracing);

// Imports the trace into run `run_id` of `database` and says what came in on stderr (unless
// `quiet`). Returns the problems, for the run's summary; never throws (a failed import is a
// problem, and the sidecar files stay for `gpuscope kernels --import`).
std::vector<std::string> import_kernel_trace(const KernelTracing& tracing,
                                             const std::filesystem::path& database,
                                             std::int64_t run_id,
                                             const std::vector<DeviceDescription>& devices,
                                             std::int64_t wall_minus_mono_ns,
                                             std::int64_t run_end_mono_ns, bool quiet);

}  // namespace gpuscope::app
