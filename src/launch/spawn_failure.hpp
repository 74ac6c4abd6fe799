// Why a command could not be started, in the terms a shell uses for its exit status.
#pragma once

#include <string>

namespace gpuscope::launch {

struct SpawnFailure {
  enum class Reason {
    NotFound,       // no such file, or not on PATH: a shell's 127
    NotExecutable,  // found, but execve refused it (permission, format, bad interpreter): 126
    SystemError,    // gpuscope could not set the job up (pipes, fork); nothing about the command
  };

  Reason reason = Reason::NotFound;
  std::string command;     // argv[0] as given
  std::string path;        // the file that was tried, when one was found
  int error_number = 0;    // errno of the failing call
  std::string error_text;  // strerror(error_number), possibly with a note ("bad interpreter")

  // The exit status a shell reports for this failure: 127, 126, or 1 for a system error.
  int exit_code() const;
  // One sentence for the CLI's error line, e.g. "command not found: foo" or
  // "cannot execute ./run.sh (Permission denied)".
  std::string message() const;
};

}  // namespace gpuscope::launch
