// What a started Job holds between start() and wait(). Private to src/launch.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "launch/job.hpp"
#include "launch/output_channel.hpp"
#include "launch/terminal.hpp"
#include "launch/unique_fd.hpp"

namespace gpuscope::launch {

struct Job::State {
  LaunchOptions options;
  pid_t pid = -1;  // also the process group id
  std::int64_t start_wall_ns = 0;
  std::int64_t start_mono_ns = 0;
  UniqueFd signal_fd;  // the launcher's signals, read instead of delivered
  UniqueFd pid_fd;     // readable when the job exits; -1 where pidfd_open is unavailable
  std::vector<OutputChannel> channels;  // stdout then stderr when capturing, else none
  Terminal terminal;                    // inert unless job control applies
  std::vector<std::string> problems;    // met while starting, reported by wait()
  bool waited = false;
};

// The wait loop behind Job::wait (job_wait.cpp).
JobResult wait_for_job(Job::State& state, const JobCallbacks& callbacks);

// Kills the process group and reaps the job: for a Job dropped without wait().
void abandon_job(Job::State& state);

}  // namespace gpuscope::launch
