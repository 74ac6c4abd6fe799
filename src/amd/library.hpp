// A loaded AMD SMI or ROCm SMI library: the function table expanded from entry_points.hpp, filled
// by util::LoadedLibrary. As nvml::Library: no file-static state, every Library is an object, so
// tests load the real loader path against different libraries in one process.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "amd/abi.hpp"
#include "amd/entry_points.hpp"
#include "util/loaded_library.hpp"

namespace gpuscope::amd {

using util::Entry;
using util::Requirement;
using util::Resolution;

// The two libraries gpuscope knows, each with its status type, function table and file names.
struct AmdSmiApi {
  using Status = amdsmi_status_t;
  struct Table {
#define GPUSCOPE_AMD_TABLE_X(id, req, params, args, symbol) Entry<amdsmi_status_t params> id;
    GPUSCOPE_AMDSMI_ENTRY_POINTS(GPUSCOPE_AMD_TABLE_X)
#undef GPUSCOPE_AMD_TABLE_X
  };
  static constexpr const char* kName = "AMD SMI";
  static constexpr Status kSuccess = kAmdSuccess;
  static constexpr Status kFunctionNotFound = kAmdFunctionNotFound;
};

struct RocmSmiApi {
  using Status = rsmi_status_t;
  struct Table {
#define GPUSCOPE_RSMI_TABLE_X(id, req, params, args, symbol) Entry<rsmi_status_t params> id;
    GPUSCOPE_RSMI_ENTRY_POINTS(GPUSCOPE_RSMI_TABLE_X)
#undef GPUSCOPE_RSMI_TABLE_X
  };
  static constexpr const char* kName = "ROCm SMI";
  static constexpr Status kSuccess = kRsmiSuccess;
  static constexpr Status kFunctionNotFound = kRsmiFunctionNotFound;
};

// A failed call: its library's status code (amdsmi_status_t and rsmi_status_t are both 32-bit)
// and the function that returned it.
using Failure = util::CallFailure<std::uint32_t>;
using Status = util::CallStatus<std::uint32_t>;
template <typename T>
using Expected = tl::expected<T, Failure>;

template <typename Api>
class Library {
 public:
  using Table = typename Api::Table;

  // dlopens `path` and resolves every entry. Throws Error naming the library, dlerror() and what
  // to do when it cannot be opened or lacks a required entry point.
  static std::shared_ptr<const Library> open(const std::string& path, bool simulated);
  // The first of the library's usual names that opens (for the system's library); nullptr with
  // `why` set to dlerror()'s words for the first name when none does.
  static std::shared_ptr<const Library> open_system(std::string& why);

  template <typename Signature, typename... Args>
  Status call(Entry<Signature> Table::*member, Args... args) const {
    return util::call_entry<std::uint32_t>(table_.*member, Api::kSuccess, Api::kFunctionNotFound,
                                           args...);
  }

  // Calls an entry whose last argument receives one T, and returns that T (or why not).
  template <typename T, typename Signature, typename... Args>
  tl::expected<T, Failure> read(Entry<Signature> Table::*member, Args... args) const {
    T value{};
    if (auto s = call(member, args..., &value); !s) return tl::unexpected(s.error());
    return value;
  }

  bool has(auto Table::*member) const { return (table_.*member).fn != nullptr; }

  // The library's words for a status code (its *_string function, else gpuscope's own).
  std::string status_text(std::uint32_t code) const;
  // "rsmi_dev_power_ave_get: Permission denied (ROCm SMI status 4)".
  std::string describe(const Failure& failure) const;

  const std::string& path() const { return loaded_.path(); }
  bool simulated() const { return simulated_; }
  const std::vector<Resolution>& resolutions() const { return loaded_.resolutions(); }
  // The simulated library's explanation of its last failure (empty for AMD's libraries).
  std::string simulator_last_error() const;

 private:
  Library(void* handle, std::string path, bool simulated);
  void resolve_all();

  util::LoadedLibrary loaded_;
  bool simulated_ = false;
  Table table_;
};

using AmdSmiLibrary = Library<AmdSmiApi>;
using RocmSmiLibrary = Library<RocmSmiApi>;

// gpuscope's words for a status code, when the library has none.
std::string_view fallback_status_text(bool rocm_smi, std::uint32_t code);

}  // namespace gpuscope::amd
