// Finding the file a command names, the way execvp and shells do, so that "not found" (127) and
// "found but not executable" (126) are told apart before anything is spawned.
#pragma once

#include <string>
#include <tl/expected.hpp>

#include "launch/spawn_failure.hpp"

namespace gpuscope::launch {

// The path to execute for `command`: itself when it contains a '/', else the first executable
// regular file named `command` in the colon-separated `search_path` (an empty entry is the
// current directory). Fails with NotFound, or NotExecutable when only non-executable matches
// (or directories) exist.
tl::expected<std::string, SpawnFailure> resolve_command(const std::string& command,
                                                        const std::string& search_path);

}  // namespace gpuscope::launch
