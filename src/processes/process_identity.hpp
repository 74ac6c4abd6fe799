// Who a process is, from what /proc says about it: its command, user, parent, start time,
// cgroup (container, pod, SLURM job) and the launcher's rank in its environment. gpuscope asks
// this of every pid NVML shows on a GPU; such a process may belong to another user or be gone
// by the time it is looked at, so whatever cannot be read is absent, never an error.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "core/run.hpp"
#include "processes/cgroup.hpp"
#include "util/environment.hpp"

namespace gpuscope::processes {

struct ProcessIdentity {
  unsigned pid = 0;
  std::optional<std::string> command;        // /proc/PID/comm without the newline
  std::optional<std::string> command_line;   // /proc/PID/cmdline, arguments joined by spaces, at
                                             // most 512 bytes (cut on a UTF-8 boundary, "…"
                                             // appended); absent when empty (kernel threads,
                                             // zombies)
  std::optional<unsigned> uid;               // real uid from /proc/PID/status "Uid:"
  std::optional<std::string> user;           // name of uid (getpwuid_r), absent when unknown
  std::optional<unsigned> ppid;              // from /proc/PID/stat
  std::optional<std::uint64_t> start_ticks;  // field 22 of /proc/PID/stat (tells a reused pid
                                             // apart)
  CgroupIdentity cgroup;                     // from /proc/PID/cgroup
  RankContext ranks;  // from /proc/PID/environ via ranks::read_rank_context; empty when environ
                      // is unreadable
  std::optional<std::string> slurm_job_id;  // SLURM_JOB_ID from environ, else the cgroup's
};

// Reads everything it can about `pid` under `proc_root` (tests pass a fake tree). Never throws
// for a vanished pid or unreadable files: those fields are absent. Each file is read whole, at
// most 1 MiB of it; a larger one (a huge environment) is unread and its fields absent.
ProcessIdentity resolve_process(unsigned pid, const std::filesystem::path& proc_root = "/proc");

// Only the start time of `pid` (field 22 of /proc/PID/stat): the cheap check of whether a pid is
// still the process it was. Absent when the pid is gone.
std::optional<std::uint64_t> start_ticks(unsigned pid,
                                         const std::filesystem::path& proc_root = "/proc");

// Whether `pid` is `ancestor` or one of its descendants, walking ppid links (at most 256 of
// them; false when the chain breaks, loops or reaches pid 0 first).
bool descends_from(unsigned pid, unsigned ancestor,
                   const std::filesystem::path& proc_root = "/proc");

// An EnvLookup over the NUL-separated text of /proc/PID/environ. Entries without '=' are
// skipped; of a name given twice, the first wins, as getenv(3) finds it.
util::EnvLookup environment_from_block(std::string block);

}  // namespace gpuscope::processes
