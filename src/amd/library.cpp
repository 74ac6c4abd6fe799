#include "amd/library.hpp"

#include <fmt/format.h>

#include <type_traits>

#include "core/error.hpp"
#include "util/dynamic_library.hpp"

namespace gpuscope::amd {
namespace {

template <typename Api>
struct Names;

// AMD SMI ships as libamd_smi.so in ROCm (/opt/rocm/lib, not always on the loader's path).
template <>
struct Names<AmdSmiApi> {
  static constexpr std::initializer_list<const char*> kSystem = {"libamd_smi.so",
                                                                 "/opt/rocm/lib/libamd_smi.so"};
  static constexpr const char* kLastError = "gpuscopeSimAmdSmiLastError";
};

// ROCm SMI: Debian 12's librocm-smi64-1 installs librocm_smi64.so.1; ROCm's own packages the
// unversioned name in /opt/rocm/lib.
template <>
struct Names<RocmSmiApi> {
  static constexpr std::initializer_list<const char*> kSystem = {
      "librocm_smi64.so.1", "librocm_smi64.so", "/opt/rocm/lib/librocm_smi64.so"};
  static constexpr const char* kLastError = "gpuscopeSimRocmSmiLastError";
};

}  // namespace

template <typename Api>
std::shared_ptr<const Library<Api>> Library<Api>::open(const std::string& path, bool simulated) {
  const util::OpenedLibrary opened = util::dlopen_first({path.c_str()});
  if (opened.handle == nullptr) {
    if (simulated) {
      throw Error(fmt::format("cannot load the simulated {} library", Api::kName), opened.error,
                  "reinstall gpuscope (lib/gpuscope holds the simulated libraries)");
    }
    throw Error(fmt::format("cannot load the {} library {}", Api::kName, path), opened.error,
                "check the path in GPUSCOPE_AMD_SMI_LIBRARY or GPUSCOPE_ROCM_SMI_LIBRARY");
  }
  auto library = std::shared_ptr<Library>(new Library(opened.handle, path, simulated));
  library->resolve_all();
  return library;
}

template <typename Api>
std::shared_ptr<const Library<Api>> Library<Api>::open_system(std::string& why) {
  const util::OpenedLibrary opened = util::dlopen_first(Names<Api>::kSystem);
  if (opened.handle == nullptr) {
    why = opened.error;
    return nullptr;
  }
  auto library = std::shared_ptr<Library>(new Library(opened.handle, opened.name, false));
  library->resolve_all();
  return library;
}

template <typename Api>
Library<Api>::Library(void* handle, std::string path, bool simulated)
    : loaded_(handle, std::move(path)), simulated_(simulated) {}

template <typename Api>
void Library<Api>::resolve_all() {
#define GPUSCOPE_AMD_RESOLVE_X(id, req, params, args, symbol) \
  loaded_.resolve(table_.id, #id, Requirement::req, {#symbol});
  if constexpr (std::is_same_v<Api, AmdSmiApi>) {
    GPUSCOPE_AMDSMI_ENTRY_POINTS(GPUSCOPE_AMD_RESOLVE_X)
  } else {
    GPUSCOPE_RSMI_ENTRY_POINTS(GPUSCOPE_AMD_RESOLVE_X)
  }
#undef GPUSCOPE_AMD_RESOLVE_X
  if (const std::string missing = loaded_.missing_required(); !missing.empty()) {
    throw Error(fmt::format("{} is not a usable {} library", path(), Api::kName),
                fmt::format("it does not export {}", missing),
                "point GPUSCOPE_AMD_SMI_LIBRARY at ROCm's libamd_smi.so, or "
                "GPUSCOPE_ROCM_SMI_LIBRARY at librocm_smi64.so");
  }
}

template <typename Api>
std::string Library<Api>::status_text(std::uint32_t code) const {
  const char* text = nullptr;
  Status status;
  if constexpr (std::is_same_v<Api, AmdSmiApi>) {
    status = call(&Table::StatusCodeToString, code, &text);
  } else {
    status = call(&Table::StatusString, code, &text);
  }
  if (status && text != nullptr && *text != '\0') return text;
  return std::string(fallback_status_text(std::is_same_v<Api, RocmSmiApi>, code));
}

template <typename Api>
std::string Library<Api>::describe(const Failure& failure) const {
  return fmt::format("{}: {} ({} status {})", failure.symbol, status_text(failure.code), Api::kName,
                     failure.code);
}

template <typename Api>
std::string Library<Api>::simulator_last_error() const {
  const auto last_error = loaded_.function<const char*()>(Names<Api>::kLastError);
  if (last_error == nullptr) return {};
  const char* text = last_error();
  return text != nullptr ? text : "";
}

template class Library<AmdSmiApi>;
template class Library<RocmSmiApi>;

std::string_view fallback_status_text(bool rocm_smi, std::uint32_t code) {
  if (code == kAmdFunctionNotFound) return "the library does not export this function";
  if (rocm_smi) {
    switch (code) {
      case kRsmiInvalidArgs:
        return "invalid arguments";
      case kRsmiNotSupported:
        return "not supported";
      case kRsmiFileError:
        return "problem accessing a file";
      case kRsmiPermission:
        return "permission denied";
      case kRsmiInitError:
        return "initialisation failed";
      case kRsmiNotFound:
        return "not found";
      case kRsmiBusy:
        return "busy";
      default:
        return "unknown error";
    }
  }
  switch (code) {
    case kAmdInval:
      return "invalid parameters";
    case kAmdNotSupported:
      return "not supported";
    case kAmdNoPerm:
      return "permission denied";
    case kAmdFileError:
      return "problem accessing a file";
    case kAmdInitError:
      return "initialisation failed";
    case kAmdNotFound:
      return "device not found";
    case kAmdDriverNotLoaded:
      return "processor driver not loaded";
    default:
      return "unknown error";
  }
}

}  // namespace gpuscope::amd
