// The one place that calls posix_spawn: the job's environment, process group, signal state,
// descriptors and terminal.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "launch/spawn_failure.hpp"

namespace gpuscope::launch {

struct SpawnRequest {
  std::string path;               // the resolved file to execute
  std::vector<std::string> argv;  // argv[0] as the user wrote it
  std::vector<std::string> env;   // "NAME=value" entries
  int stdout_fd = -1;             // dup'ed onto the job's fd 1; -1: inherit gpuscope's
  int stderr_fd = -1;             // dup'ed onto the job's fd 2; -1: inherit gpuscope's
  int terminal_fd = -1;           // make the job's group the foreground of this terminal; -1: no
};

// gpuscope's environment with `extra` set on top, as "NAME=value" entries.
std::vector<std::string> job_environment(const std::map<std::string, std::string>& extra);

// The value of `name` in `env` entries, or `fallback` when absent.
std::string environment_value(const std::vector<std::string>& env, const std::string& name,
                              const std::string& fallback);

// Spawns the request in a new process group whose id is the returned pid, with the signal mask
// gpuscope had before the launcher's signals were blocked and default dispositions for them.
tl::expected<pid_t, SpawnFailure> spawn_job(const SpawnRequest& request);

}  // namespace gpuscope::launch
