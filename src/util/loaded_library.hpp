// The loader the vendor libraries share (NVML, DCGM, AMD SMI, ROCm SMI): a LoadedLibrary owns a
// dlopen handle and fills a function table, one Entry at a time, from the first of an entry's
// symbols that the library exports, recording how each entry was resolved; call_entry calls an
// entry and turns a missing function or a status other than success into a CallFailure. What is
// the vendor's own (its entry-point list, status codes, words and hints) stays in its folder.
#pragma once

#include <initializer_list>
#include <string>
#include <tl/expected.hpp>
#include <vector>

namespace gpuscope::util {

// Whether a library without an entry is refused (Required) or loaded without it (Optional).
enum class Requirement { Required, Optional };

// One slot of a function table: the resolved pointer (null if the library lacks every symbol
// listed for the entry) and the symbol it came from (or the preferred symbol when unresolved), so
// failures name the function the library actually ran.
template <typename Signature>
struct Entry {
  Signature* fn = nullptr;
  const char* symbol = nullptr;
};

// How an entry was resolved, for diagnostics and tests.
struct Resolution {
  std::string id;  // entry id, e.g. "DeviceGetCount"
  Requirement requirement = Requirement::Required;
  std::vector<std::string> candidates;  // symbols tried, preferred (newest) first
  std::string resolved;                 // the symbol found, empty if none
  bool found() const { return !resolved.empty(); }
  bool is_fallback() const { return found() && resolved != candidates.front(); }
};

// A failed call through an Entry: the status it returned (or the vendor's "function not found")
// and the function's name. No allocation, so a sampling loop can afford one per call.
template <typename Code>
struct CallFailure {
  Code code{};
  const char* symbol = "";  // e.g. "nvmlDeviceGetPowerUsage"
  bool operator==(const CallFailure&) const = default;
};

template <typename Code>
using CallStatus = tl::expected<void, CallFailure<Code>>;

// Calls `entry` with `args`. A missing entry fails with `not_found` without calling anything; a
// status other than `success` fails with that status.
template <typename Code, typename Signature, typename... Args>
CallStatus<Code> call_entry(const Entry<Signature>& entry, Code success, Code not_found,
                            Args... args) {
  if (entry.fn == nullptr) return tl::unexpected(CallFailure<Code>{not_found, entry.symbol});
  const auto status = entry.fn(args...);
  if (status != success) {
    return tl::unexpected(CallFailure<Code>{static_cast<Code>(status), entry.symbol});
  }
  return {};
}

class LoadedLibrary {
 public:
  // Takes ownership of `handle` (from dlopen_first, never null): dlclosed with this object.
  // `path`: the name it was opened by.
  LoadedLibrary(void* handle, std::string path);
  ~LoadedLibrary();
  LoadedLibrary(const LoadedLibrary&) = delete;
  LoadedLibrary& operator=(const LoadedLibrary&) = delete;

  // Points `slot` at the first of `symbols` (preferred first, at least one, string literals: the
  // slot keeps the pointer) that the library exports, and records how in resolutions(). When it
  // exports none, `slot.fn` stays null and `slot.symbol` is the preferred symbol.
  template <typename Signature>
  void resolve(Entry<Signature>& slot, const char* id, Requirement requirement,
               std::initializer_list<const char*> symbols) {
    const Found found = find(id, requirement, symbols);
    // POSIX guarantees that an object pointer returned by dlsym converts to a function pointer.
    slot.fn = reinterpret_cast<Signature*>(found.address);
    slot.symbol = found.symbol;
  }

  // The required entries the library lacks, each as its candidates: "nvmlInit_v2 or nvmlInit,
  // nvmlShutdown". Empty when it lacks none.
  std::string missing_required() const;

  // The exported function `name`, not recorded in resolutions(); null when there is none.
  template <typename Signature>
  Signature* function(const char* name) const {
    return reinterpret_cast<Signature*>(address_of(name));
  }

  const std::string& path() const { return path_; }
  const std::vector<Resolution>& resolutions() const { return resolutions_; }

 private:
  struct Found {
    void* address = nullptr;
    const char* symbol = nullptr;
  };
  Found find(const char* id, Requirement requirement, std::initializer_list<const char*> symbols);
  void* address_of(const char* name) const;

  void* handle_ = nullptr;
  std::string path_;
  std::vector<Resolution> resolutions_;
};

}  // namespace gpuscope::util
