#include <string>

#include "launch/job.hpp"
#include "launch/signals.hpp"

namespace gpuscope::launch {
namespace {

std::string describe_ending(const JobResult& result) {
  if (result.term_signal) {
    return "killed by " + signal_name(*result.term_signal) +
           (result.core_dumped ? ", core dumped" : "") + " (exit code " +
           std::to_string(result.exit_code) + ")";
  }
  return "exited with code " + std::to_string(result.exit_code);
}

}  // namespace

std::string describe_exit(const JobResult& result) {
  switch (result.status) {
    case RunStatus::NotStarted:
      return result.spawn_failure ? result.spawn_failure->message() : "not started";
    case RunStatus::TimedOut:
      return "stopped at the max runtime: " + describe_ending(result);
    case RunStatus::Running:
      return "still running";
    case RunStatus::Finished:
    case RunStatus::Signaled:
      break;
  }
  return describe_ending(result);
}

}  // namespace gpuscope::launch
