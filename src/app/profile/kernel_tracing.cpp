#include "app/profile/kernel_tracing.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <system_error>

#include "core/error.hpp"
#include "core/paths.hpp"
#include "trace/import.hpp"
#include "trace/sidecar_format.hpp"
#include "trace/sidecar_reader.hpp"

#ifndef GPUSCOPE_CUPTI_BUILT
#define GPUSCOPE_CUPTI_BUILT 0
#endif

namespace gpuscope::app {
namespace fs = std::filesystem;

fs::path cupti_library_path() {
  if (const char* path = std::getenv("GPUSCOPE_CUPTI_LIBRARY"); path != nullptr && *path != '\0') {
    return path;
  }
  return private_library_dir() / "libgpuscope_cupti.so";
}

fs::path trace_dir_for(const fs::path& database) {
  return database.string() + ".trace";
}

fs::path require_cupti_library() {
  const fs::path library = cupti_library_path();
  std::error_code ec;
  if (!fs::is_regular_file(library, ec)) {
    if (GPUSCOPE_CUPTI_BUILT == 0 && std::getenv("GPUSCOPE_CUPTI_LIBRARY") == nullptr) {
      throw Error::usage(
          "--trace-kernels is not available in this gpuscope",
          "it was built without the CUDA toolkit's CUPTI, so libgpuscope_cupti.so was not built",
          "install the CUDA toolkit 13 or newer (cupti.h, libcupti) and rebuild gpuscope, or "
          "record with 'nsys profile --export sqlite' and read the export with 'gpuscope "
          "kernels REPORT.sqlite'");
    }
    throw Error::usage(fmt::format("--trace-kernels needs {}", library.string()),
                       "the file is not there",
                       "reinstall gpuscope (cmake --install puts it in lib/gpuscope), or point "
                       "GPUSCOPE_CUPTI_LIBRARY at libgpuscope_cupti.so");
  }
  return fs::absolute(library, ec);
}

KernelTracing prepare_kernel_tracing(const fs::path& database, bool overwrite) {
  KernelTracing tracing;
  tracing.library = require_cupti_library();
  std::error_code ec;
  tracing.dir = fs::absolute(trace_dir_for(database), ec);
  if (!trace::sidecar_files(tracing.dir).empty()) {
    if (!overwrite) {
      throw Error::usage(
          fmt::format("{} holds the kernel trace of an earlier run", tracing.dir.string()),
          "it was not imported (gpuscope was stopped before the end)",
          fmt::format("import it with 'gpuscope kernels --import {}', or use "
                      "-f/--force-overwrite to discard it",
                      database.string()));
    }
    for (const fs::path& file : trace::sidecar_files(tracing.dir)) fs::remove(file, ec);
  }
  fs::create_directories(tracing.dir, ec);
  if (ec) {
    throw Error::usage(fmt::format("cannot create {}", tracing.dir.string()), ec.message(),
                       "choose an -o in a directory you can write to");
  }
  return tracing;
}

std::map<std::string, std::string> tracing_environment(const KernelTracing& tracing) {
  if (const char* old = std::getenv(trace::kInjectionVariable); old != nullptr && *old != '\0') {
    fmt::print(stderr,
               "gpuscope: note: {} was set to {}; --trace-kernels replaces it for the job (CUDA "
               "loads one injection library)\n",
               trace::kInjectionVariable, old);
  }
  std::map<std::string, std::string> env{{trace::kInjectionVariable, tracing.library.string()},
                                         {trace::kTraceDirVariable, tracing.dir.string()}};
  std::string kinds = tracing.kernels ? "kernels" : "";
  if (tracing.nvtx) {
    kinds += kinds.empty() ? "nvtx" : ",nvtx";
    if (const char* old = std::getenv(trace::kNvtxInjectionVariable);
        old != nullptr && *old != '\0') {
      fmt::print(stderr,
                 "gpuscope: note: {} was set to {}; NVTX ranges are traced through gpuscope's "
                 "library for the job instead (NVTX loads one tool)\n",
                 trace::kNvtxInjectionVariable, old);
    }
    env[trace::kNvtxInjectionVariable] = tracing.library.string();
  }
  env[trace::kTraceKindsVariable] = kinds;
  return env;
}

std::vector<std::string> import_kernel_trace(const KernelTracing& tracing, const fs::path& database,
                                             std::int64_t run_id,
                                             const std::vector<DeviceDescription>& devices,
                                             std::int64_t wall_minus_mono_ns,
                                             std::int64_t run_end_mono_ns, bool quiet) {
  trace::ImportOptions options;
  options.wall_minus_mono_ns = wall_minus_mono_ns;
  options.run_end_mono_ns = run_end_mono_ns;
  try {
    const trace::ImportSummary summary =
        trace::import_trace_dir(tracing.dir, database, run_id, devices, options);
    if (!quiet) {
      if (tracing.kernels) {
        fmt::print(stderr,
                   "gpuscope: kernel trace: {} kernels and {} memcpy/memset from {} CUDA "
                   "process{} (gpuscope kernels {})\n",
                   summary.kernels, summary.memory_ops, summary.files,
                   summary.files == 1 ? "" : "es", database.string());
      }
      if (tracing.nvtx) {
        fmt::print(stderr, "gpuscope: NVTX: {} range{} and instants from {} process{} (phases)\n",
                   summary.phases, summary.phases == 1 ? "" : "s", summary.files,
                   summary.files == 1 ? "" : "es");
      }
    }
    return summary.problems;
  } catch (const Error& e) {
    return {
        fmt::format("the kernel trace could not be imported: {}; the trace files stay in {} "
                    "(gpuscope kernels --import {})",
                    e.what(), tracing.dir.string(), database.string())};
  }
}

}  // namespace gpuscope::app
