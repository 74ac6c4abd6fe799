// The loaded NVML library: the function table expanded from entry_points.hpp, filled by
// util::LoadedLibrary, and NVML's words and hints for a failed call.
//
// There is no file-static state: every Library is an object, so tests can load the real loader
// path twice, against different libraries, in one process.
#pragma once

#include <memory>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "core/error.hpp"
#include "nvml/abi.hpp"
#include "nvml/entry_points.hpp"
#include "util/loaded_library.hpp"

namespace gpuscope::nvml {

using util::Entry;
using util::Requirement;
using util::Resolution;

struct FunctionTable {
#define GPUSCOPE_TABLE_X1(id, req, params, args, s1) Entry<nvmlReturn_t params> id;
#define GPUSCOPE_TABLE_X2(id, req, params, args, s1, s2) Entry<nvmlReturn_t params> id;
#define GPUSCOPE_TABLE_X3(id, req, params, args, s1, s2, s3) Entry<nvmlReturn_t params> id;
  GPUSCOPE_NVML_ENTRY_POINTS(GPUSCOPE_TABLE_X1, GPUSCOPE_TABLE_X2, GPUSCOPE_TABLE_X3)
#undef GPUSCOPE_TABLE_X1
#undef GPUSCOPE_TABLE_X2
#undef GPUSCOPE_TABLE_X3
  Entry<const char*(nvmlReturn_t)> ErrorString;
};

// A failed NVML call: its return code and the NVML function that returned it.
using Failure = util::CallFailure<nvmlReturn_t>;
using Status = util::CallStatus<nvmlReturn_t>;
template <typename T>
using Expected = tl::expected<T, Failure>;

struct LoadOptions {
  // Explicit library path (--nvml-library or GPUSCOPE_NVML_LIBRARY); empty: search the system
  // for libnvidia-ml.so.1, then libnvidia-ml.so.
  std::string path;
  // Set when the library is gpuscope's simulated GPUs, to word errors accordingly.
  bool simulated = false;
};

// The summary of Library::open's error when the system has no NVML library at all.
inline constexpr const char* kNoDriver = "no NVIDIA driver found";
// Whether `error` is that one: no NVIDIA driver on this machine.
bool is_no_driver(const Error& error);

class Library {
 public:
  // Loads and resolves the library. Throws Error naming the library, dlerror() and what to do
  // when it cannot be opened or lacks a required entry point.
  static std::shared_ptr<const Library> open(const LoadOptions& options);

  // Calls the entry point in `member` with `args`; a missing optional entry point yields
  // kErrorFunctionNotFound without calling anything.
  template <typename Signature, typename... Args>
  Status call(Entry<Signature> FunctionTable::*member, Args... args) const {
    return util::call_entry(table_.*member, kSuccess, kErrorFunctionNotFound, args...);
  }

  bool has(auto FunctionTable::*member) const { return (table_.*member).fn != nullptr; }

  // nvmlErrorString(code), with a fallback text for codes the library does not know.
  std::string error_string(nvmlReturn_t code) const;
  // "nvmlDeviceGetPowerUsage: Not Supported (NVML error 3)".
  std::string describe(const Failure& failure) const;
  // An Error for a failure the user must see: what failed, the driver's words, and a hint.
  Error to_error(const Failure& failure, std::string context = {}) const;

  const std::string& path() const { return loaded_.path(); }
  bool simulated() const { return simulated_; }
  const std::vector<Resolution>& resolutions() const { return loaded_.resolutions(); }
  // The simulated library's explanation of its last failure (empty for a real driver).
  std::string simulator_last_error() const;

 private:
  Library(void* handle, std::string path, bool simulated);
  void resolve_all();

  util::LoadedLibrary loaded_;
  bool simulated_ = false;
  FunctionTable table_;
};

}  // namespace gpuscope::nvml
