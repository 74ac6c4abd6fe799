#include "nvml/library.hpp"

#include <fmt/format.h>

#include "nvml/error_text.hpp"
#include "util/dynamic_library.hpp"

namespace gpuscope::nvml {

std::shared_ptr<const Library> Library::open(const LoadOptions& options) {
  if (!options.path.empty()) {
    const util::OpenedLibrary opened = util::dlopen_first({options.path.c_str()});
    if (opened.handle == nullptr) {
      if (options.simulated) {
        throw Error("cannot load the simulated-GPU library", opened.error,
                    "reinstall gpuscope, or set GPUSCOPE_SIM_LIBRARY to libgpuscope-sim-nvml.so");
      }
      throw Error(fmt::format("cannot load the NVML library {}", options.path), opened.error,
                  "check the path given to --nvml-library or GPUSCOPE_NVML_LIBRARY");
    }
    auto library =
        std::shared_ptr<Library>(new Library(opened.handle, options.path, options.simulated));
    library->resolve_all();
    return library;
  }
  const util::OpenedLibrary opened = util::dlopen_first({"libnvidia-ml.so.1", "libnvidia-ml.so"});
  if (opened.handle != nullptr) {
    auto library = std::shared_ptr<Library>(new Library(opened.handle, opened.name, false));
    library->resolve_all();
    return library;
  }
  throw Error(kNoDriver, opened.error,
              "use --simulate SCENARIO to try gpuscope without a GPU (gpuscope scenarios lists "
              "them), or --nvml-library PATH if libnvidia-ml.so.1 is installed elsewhere");
}

bool is_no_driver(const Error& error) {
  return error.summary() == kNoDriver;
}

Library::Library(void* handle, std::string path, bool simulated)
    : loaded_(handle, std::move(path)), simulated_(simulated) {}

void Library::resolve_all() {
  // clang-format off
#define GPUSCOPE_RESOLVE_X1(id, req, params, args, s1) \
  loaded_.resolve(table_.id, #id, Requirement::req, {#s1});
#define GPUSCOPE_RESOLVE_X2(id, req, params, args, s1, s2) \
  loaded_.resolve(table_.id, #id, Requirement::req, {#s1, #s2});
#define GPUSCOPE_RESOLVE_X3(id, req, params, args, s1, s2, s3) \
  loaded_.resolve(table_.id, #id, Requirement::req, {#s1, #s2, #s3});
  GPUSCOPE_NVML_ENTRY_POINTS(GPUSCOPE_RESOLVE_X1, GPUSCOPE_RESOLVE_X2, GPUSCOPE_RESOLVE_X3)
#undef GPUSCOPE_RESOLVE_X1
#undef GPUSCOPE_RESOLVE_X2
#undef GPUSCOPE_RESOLVE_X3
  // clang-format on
  loaded_.resolve(table_.ErrorString, "ErrorString", Requirement::Required, {"nvmlErrorString"});
  if (const std::string missing = loaded_.missing_required(); !missing.empty()) {
    throw Error(
        fmt::format("{} is not a usable NVML library", path()),
        fmt::format("it does not export {}", missing),
        "point --nvml-library at the libnvidia-ml.so.1 of an NVIDIA driver (R450 or newer)");
  }
}

std::string Library::error_string(nvmlReturn_t code) const {
  if (table_.ErrorString.fn != nullptr) {
    if (const char* text = table_.ErrorString.fn(code); text != nullptr && *text != '\0') {
      return text;
    }
  }
  return std::string(fallback_error_text(code));
}

std::string Library::describe(const Failure& failure) const {
  return fmt::format("{}: {} (NVML error {})", failure.symbol, error_string(failure.code),
                     failure.code);
}

Error Library::to_error(const Failure& failure, std::string context) const {
  std::string what =
      context.empty() ? fmt::format("{} failed", failure.symbol) : std::move(context);
  std::string why = fmt::format("{}: {} (NVML error {})", failure.symbol,
                                error_string(failure.code), failure.code);
  if (simulated_) {
    if (std::string detail = simulator_last_error(); !detail.empty()) why += ": " + detail;
  }
  return Error(std::move(what), std::move(why), std::string(hint_for(failure.code, simulated_)));
}

std::string Library::simulator_last_error() const {
  const auto last_error = loaded_.function<const char*()>("gpuscopeSimLastError");
  if (last_error == nullptr) return {};
  const char* text = last_error();
  return text != nullptr ? text : "";
}

}  // namespace gpuscope::nvml
