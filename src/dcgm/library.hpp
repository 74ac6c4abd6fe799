// The loaded DCGM library: the function table expanded from entry_points.hpp, filled by
// util::LoadedLibrary as nvml/library.hpp's is for NVML. DCGM is optional: a machine
// without it is the normal case, and the caller decides what its absence means.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "dcgm/abi.hpp"
#include "dcgm/entry_points.hpp"
#include "util/loaded_library.hpp"

namespace gpuscope::dcgm {

using util::Entry;
using util::Requirement;
using util::Resolution;

// The status code's name, "DCGM_ST_MODULE_NOT_LOADED", or "DCGM status N" for one unknown.
std::string status_name(dcgmReturn_t code);

struct FunctionTable {
#define GPUSCOPE_DCGM_TABLE(id, req, params, args, symbol) Entry<dcgmReturn_t params> id;
  GPUSCOPE_DCGM_ENTRY_POINTS(GPUSCOPE_DCGM_TABLE)
#undef GPUSCOPE_DCGM_TABLE
  Entry<const char*(dcgmReturn_t)> ErrorString;  // DCGM's `errorString`
  // Only in gpuscope's simulated libdcgm: why its last call failed.
  Entry<const char*()> SimLastError;
};

struct LoadOptions {
  // Explicit library path; empty: libdcgm.so.4, then libdcgm.so.3 (DCGM 4 and 3).
  std::string path;
};

class Library {
 public:
  // Loads and resolves the library. Throws Error naming the library, dlerror() and what to do
  // when it cannot be opened or lacks a required entry point.
  static std::shared_ptr<const Library> open(const LoadOptions& options);

  const FunctionTable& table() const { return table_; }
  const std::string& path() const { return loaded_.path(); }
  // errorString(code), or "DCGM error N" for a code the library does not know.
  std::string error_string(dcgmReturn_t code) const;
  // The simulated library's reason for its last failure; "" for NVIDIA's DCGM.
  std::string simulator_reason() const;
  // How each entry point was resolved (a library lacking a required one is refused).
  const std::vector<Resolution>& resolutions() const { return loaded_.resolutions(); }

 private:
  Library(void* handle, std::string path);
  void resolve_all();

  util::LoadedLibrary loaded_;
  FunctionTable table_;
};

}  // namespace gpuscope::dcgm
