#include "dcgm/library.hpp"

#include <fmt/format.h>

#include "util/dynamic_library.hpp"

namespace gpuscope::dcgm {

std::shared_ptr<const Library> Library::open(const LoadOptions& options) {
  if (!options.path.empty()) {
    const util::OpenedLibrary opened = util::dlopen_first({options.path.c_str()});
    if (opened.handle == nullptr) {
      throw Error(fmt::format("cannot load the DCGM library {}", options.path), opened.error,
                  "check the path given for libdcgm.so");
    }
    auto library = std::shared_ptr<Library>(new Library(opened.handle, options.path));
    library->resolve_all();
    return library;
  }
  // DCGM 4, then 3.
  const util::OpenedLibrary opened = util::dlopen_first({"libdcgm.so.4", "libdcgm.so.3"});
  if (opened.handle != nullptr) {
    auto library = std::shared_ptr<Library>(new Library(opened.handle, opened.name));
    library->resolve_all();
    return library;
  }
  throw Error("DCGM is not installed", opened.error,
              "install NVIDIA's datacenter-gpu-manager (libdcgm.so.4), or use the NVML and GPM "
              "metrics alone");
}

Library::Library(void* handle, std::string path) : loaded_(handle, std::move(path)) {}

void Library::resolve_all() {
#define GPUSCOPE_DCGM_RESOLVE(id, req, params, args, symbol) \
  loaded_.resolve(table_.id, #id, Requirement::req, {#symbol});
  GPUSCOPE_DCGM_ENTRY_POINTS(GPUSCOPE_DCGM_RESOLVE)
#undef GPUSCOPE_DCGM_RESOLVE
  loaded_.resolve(table_.ErrorString, "ErrorString", Requirement::Optional, {"errorString"});
  if (const auto last_error = loaded_.function<const char*()>("gpuscopeSimDcgmLastError")) {
    table_.SimLastError = {last_error, "gpuscopeSimDcgmLastError"};
  }
  if (const std::string missing = loaded_.missing_required(); !missing.empty()) {
    throw Error(fmt::format("{} is not a usable DCGM library", path()),
                fmt::format("it does not export {}", missing),
                "point gpuscope at the libdcgm.so.4 (or .so.3) of NVIDIA's DCGM");
  }
}

std::string status_name(dcgmReturn_t code) {
  // DCGM_ST_* by -code (docs/dcgm-abi.md); -2 is unused.
  static constexpr const char* kNames[] = {"OK",
                                           "BADPARAM",
                                           "",
                                           "GENERIC_ERROR",
                                           "MEMORY",
                                           "NOT_CONFIGURED",
                                           "NOT_SUPPORTED",
                                           "INIT_ERROR",
                                           "NVML_ERROR",
                                           "PENDING",
                                           "UNINITIALIZED",
                                           "TIMEOUT",
                                           "VER_MISMATCH",
                                           "UNKNOWN_FIELD",
                                           "NO_DATA",
                                           "STALE_DATA",
                                           "NOT_WATCHED",
                                           "NO_PERMISSION",
                                           "GPU_IS_LOST",
                                           "RESET_REQUIRED",
                                           "FUNCTION_NOT_FOUND",
                                           "CONNECTION_NOT_VALID",
                                           "GPU_NOT_SUPPORTED",
                                           "GROUP_INCOMPATIBLE",
                                           "MAX_LIMIT",
                                           "LIBRARY_NOT_FOUND",
                                           "DUPLICATE_KEY",
                                           "GPU_IN_SYNC_BOOST_GROUP",
                                           "GPU_NOT_IN_SYNC_BOOST_GROUP",
                                           "REQUIRES_ROOT",
                                           "NVVS_ERROR",
                                           "INSUFFICIENT_SIZE",
                                           "FIELD_UNSUPPORTED_BY_API",
                                           "MODULE_NOT_LOADED",
                                           "IN_USE",
                                           "GROUP_IS_EMPTY",
                                           "PROFILING_NOT_SUPPORTED",
                                           "PROFILING_LIBRARY_ERROR",
                                           "PROFILING_MULTI_PASS",
                                           "DIAG_ALREADY_RUNNING",
                                           "DIAG_BAD_JSON",
                                           "DIAG_BAD_LAUNCH",
                                           "DIAG_UNUSED",
                                           "DIAG_THRESHOLD_EXCEEDED",
                                           "INSUFFICIENT_DRIVER_VERSION",
                                           "INSTANCE_NOT_FOUND",
                                           "COMPUTE_INSTANCE_NOT_FOUND",
                                           "CHILD_NOT_KILLED",
                                           "3RD_PARTY_LIBRARY_ERROR",
                                           "INSUFFICIENT_RESOURCES",
                                           "PLUGIN_EXCEPTION",
                                           "NVVS_ISOLATE_ERROR",
                                           "NVVS_BINARY_NOT_FOUND",
                                           "NVVS_KILLED",
                                           "PAUSED",
                                           "ALREADY_INITIALIZED",
                                           "NVML_NOT_LOADED",
                                           "NVML_DRIVER_TIMEOUT",
                                           "NVVS_NO_AVAILABLE_TEST",
                                           "MNDIAG_CONNECTION_NOT_AVAILABLE",
                                           "MNDIAG_CONNECTION_UNAUTHORIZED",
                                           "REMOTE_SSH_CONNECTION_FAILED",
                                           "CHILD_SPAWN_FAILED",
                                           "FILE_IO_ERROR",
                                           "CHILD_SIGNAL_RECEIVED",
                                           "CALLER_ALREADY_STOPPED",
                                           "DIAG_STOPPED",
                                           "GPUS_DETACHED"};
  const long index = -static_cast<long>(code);
  if (index >= 0 && index < static_cast<long>(std::size(kNames)) && *kNames[index] != '\0') {
    return std::string("DCGM_ST_") + kNames[index];
  }
  return fmt::format("DCGM status {}", code);
}

std::string Library::simulator_reason() const {
  if (table_.SimLastError.fn == nullptr) return {};
  const char* text = table_.SimLastError.fn();
  return text != nullptr ? text : "";
}

std::string Library::error_string(dcgmReturn_t code) const {
  if (table_.ErrorString.fn != nullptr) {
    if (const char* text = table_.ErrorString.fn(code); text != nullptr && *text != '\0') {
      return text;
    }
  }
  return fmt::format("DCGM error {}", code);
}

}  // namespace gpuscope::dcgm
