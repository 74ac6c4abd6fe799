// Running the profiled command: spawning it in a process group of its own, passing signals on
// to that group, enforcing the time limit, capturing its output, and reporting how it ended the
// way a shell would. docs/launch.md describes the behaviour; the contract that matters most for
// callers: create a SignalGuard (launch/signals.hpp) before any thread exists.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "core/run.hpp"
#include "launch/spawn_failure.hpp"

namespace gpuscope::launch {

struct LaunchOptions {
  std::vector<std::string> argv;  // the command and its arguments; argv[0] is looked up on PATH
  bool capture_output = false;    // pipe stdout/stderr: pass through and deliver lines
  std::chrono::milliseconds max_runtime{0};      // 0: no limit
  std::chrono::milliseconds kill_grace{10000};   // SIGTERM at the limit, SIGKILL this much later
  std::map<std::string, std::string> extra_env;  // set (overriding) in the job's environment
  bool job_control = true;  // with a controlling terminal: hand it to the job, mirror its stops
};

// The argv for `--wrap SCRIPT`: /bin/sh -c SCRIPT, as sbatch --wrap does (not $SHELL, so that a
// script means the same thing whoever runs it).
std::vector<std::string> wrap_command(const std::string& script);

struct JobCallbacks {
  std::function<void(const OutputLine&)> on_output;  // each captured line, in order per stream
  std::function<void(const Event&)> on_event;        // job_start, signal, max_runtime, ...
  std::function<void()> on_tick;                     // at least every tick_interval while waiting
  std::chrono::milliseconds tick_interval{1000};
};

struct JobResult {
  RunStatus status = RunStatus::NotStarted;
  int exit_code = 0;               // as a shell reports it: code, 128 + signal, 126, 127
  std::optional<int> term_signal;  // the signal that ended the job, if one did
  bool core_dumped = false;
  std::optional<SpawnFailure> spawn_failure;  // set when status is NotStarted
  pid_t pid = -1;                             // also the job's process group id
  std::int64_t start_wall_ns = 0;
  std::int64_t start_mono_ns = 0;
  std::int64_t end_wall_ns = 0;
  std::int64_t end_mono_ns = 0;
  std::vector<std::string> problems;  // what went wrong on gpuscope's side, said plainly
};

// How the job ended, for people: "exited with code 3", "killed by SIGKILL (exit code 137)",
// "command not found: foo".
std::string describe_exit(const JobResult& result);

// The result for a command that could not be started (status NotStarted, exit code 126/127/1).
JobResult not_started(const SpawnFailure& failure);

// A started job. Move-only; a Job destroyed without wait() has its process group killed
// (SIGKILL) and reaped, so an exception in the caller never leaves a job running unwatched.
class Job {
 public:
  // Spawns options.argv in a new process group. Returns why not when the command cannot be
  // run. Throws Error when the calling thread does not block the launcher's signals (no
  // SignalGuard), since the job's signals would then kill gpuscope.
  static tl::expected<Job, SpawnFailure> start(const LaunchOptions& options);

  // Waits for the job to exit, forwarding signals, enforcing the time limit and pumping output
  // meanwhile; call once, from a thread that blocks the launcher's signals. Never throws for
  // anything the job or the callbacks do (a throwing callback is disabled and reported in
  // JobResult::problems).
  JobResult wait(const JobCallbacks& callbacks);

  // The job's pid, which is also its process group id.
  pid_t pid() const;
  // When the job was spawned (CLOCK_REALTIME / CLOCK_MONOTONIC, ns).
  std::int64_t start_wall_ns() const;
  std::int64_t start_mono_ns() const;

  Job(Job&&) noexcept;
  Job& operator=(Job&&) noexcept;
  ~Job();

  struct State;  // the spawned job's descriptors and settings (launch/job_state.hpp)

 private:
  explicit Job(std::unique_ptr<State> state);

  std::unique_ptr<State> state_;
};

// start() then wait(); a command that cannot be started gives not_started(failure).
JobResult run_job(const LaunchOptions& options, const JobCallbacks& callbacks);

}  // namespace gpuscope::launch
