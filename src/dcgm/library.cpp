#include "dcgm/library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <type_traits>

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

Library::Library(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}

Library::~Library() {
  if (handle_ != nullptr) dlclose(handle_);
}

void Library::resolve_all() {
  std::string missing;
  const auto resolve = [&](auto& slot, const char* symbol, Requirement requirement) {
    using Signature = std::remove_pointer_t<decltype(slot.fn)>;
    slot.symbol = symbol;
    if (void* address = dlsym(handle_, symbol); address != nullptr) {
      // POSIX guarantees that an object pointer returned by dlsym converts to a function pointer.
      slot.fn = reinterpret_cast<Signature*>(address);
    } else if (requirement == Requirement::Required) {
      missing += missing.empty() ? symbol : fmt::format(", {}", symbol);
    } else {
      missing_optional_.emplace_back(symbol);
    }
  };
#define GPUSCOPE_DCGM_RESOLVE(id, req, params, args, symbol) \
  resolve(table_.id, #symbol, Requirement::req);
  GPUSCOPE_DCGM_ENTRY_POINTS(GPUSCOPE_DCGM_RESOLVE)
#undef GPUSCOPE_DCGM_RESOLVE
  resolve(table_.ErrorString, "errorString", Requirement::Optional);
  if (void* address = dlsym(handle_, "gpuscopeSimDcgmLastError"); address != nullptr) {
    table_.SimLastError = {reinterpret_cast<const char* (*)()>(address),
                           "gpuscopeSimDcgmLastError"};
  }
  if (!missing.empty()) {
    throw Error(fmt::format("{} is not a usable DCGM library", path_),
                fmt::format("it does not export {}", missing),
                "point gpuscope at the libdcgm.so.4 (or .so.3) of NVIDIA's DCGM");
  }
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
