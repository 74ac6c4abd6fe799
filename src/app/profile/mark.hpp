// `gpuscope mark begin|end|point NAME`: one mark to the profiling gpuscope (docs/phases.md),
// from a shell script or any program that can start a process.
#pragma once

#include <optional>
#include <string>

namespace gpuscope::app {

struct MarkOptions {
  std::string kind;  // begin, end or point
  std::string name;
  std::string instance;     // --instance: which one ("17" of step 17)
  std::optional<long> pid;  // --pid: whose phase (default: the caller, our parent)
  bool strict = false;      // --strict: exit 1 when the mark was not delivered
  bool quiet = false;       // -q: say nothing when it was not delivered
};

// Sends the mark without ever blocking; returns the exit code: 0 (also when no profiler listens,
// unless strict), 1 when strict and it was not delivered. Throws Error::usage for a bad kind or
// an empty name.
int run_mark(const MarkOptions& options);

}  // namespace gpuscope::app
