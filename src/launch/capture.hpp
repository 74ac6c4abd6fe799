// Runs a helper program (sacct, scontrol) to completion and keeps what it printed: no shell,
// bounded output, a time limit. For the commands gpuscope asks, not for the user's job.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace gpuscope::launch {

struct Captured {
  int exit_code = -1;      // as a shell reports it (128 + signal when killed)
  std::string out;         // its standard output, at most `max_output` bytes
  std::string err;         // its standard error, likewise
  bool timed_out = false;  // killed at the time limit
};

// Runs `program` (looked up in PATH) with `arguments`; stdin is /dev/null. Throws Error when
// it cannot be started (not installed: the message names it and `install_hint`).
Captured capture(const std::string& program, const std::vector<std::string>& arguments,
                 std::chrono::milliseconds limit, const std::string& install_hint,
                 std::size_t max_output = 64 << 20);

// The same with `input` on the program's standard input (a sendmail reading its message).
Captured capture_with_input(const std::string& program, const std::vector<std::string>& arguments,
                            const std::string& input, std::chrono::milliseconds limit,
                            const std::string& install_hint);

}  // namespace gpuscope::launch
