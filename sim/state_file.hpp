// The driver state that outlives a process, as a real driver's does until reboot: the power limit
// and the locked SM clocks of each GPU, by UUID. docs/scenarios.md ("State file") gives the format.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tl/expected.hpp>

namespace gpuscope::sim {

struct StateEntry {
  unsigned power_limit_mw = 0;
  std::int64_t set_at_unix_ns = 0;  // CLOCK_REALTIME when the limit or the lock was set
  double speed = 1.0;  // work rate of the steady compute phase under limit and lock, for workloads
  unsigned locked_min_mhz = 0;  // locked SM clocks; 0 and 0: not locked
  unsigned locked_max_mhz = 0;
};

using StateMap = std::map<std::string, StateEntry>;  // by GPU UUID

inline constexpr int kStateFileVersion = 1;
// 64 GPUs take a few KiB; anything near this is not a state file.
inline constexpr std::size_t kMaxStateFileBytes = 1U << 20U;

// ${TMPDIR:-/tmp}/gpuscope-sim-<uid>-<scenario name>.json
std::string default_state_path(const std::string& scenario_name);

class StateFile {
 public:
  explicit StateFile(std::string path) : path_(std::move(path)) {}

  const std::string& path() const { return path_; }

  // The file's entries; a missing file has none.
  tl::expected<StateMap, std::string> read() const;

  // Merges entries into the file (entries of other GPUs are kept) and replaces it atomically:
  // written to a temporary file beside it, then renamed over it.
  tl::expected<void, std::string> update(const StateMap& entries);

  // Whether the file was replaced or modified since the last call (or update()). One stat().
  bool changed();

 private:
  struct Signature {
    bool exists = false;
    ino_t inode = 0;
    off_t size = 0;
    std::int64_t mtime_ns = 0;
    bool operator==(const Signature&) const = default;
  };
  Signature signature() const;

  std::string path_;
  Signature last_;
};

}  // namespace gpuscope::sim
