#include "launch/job.hpp"

#include <fcntl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "launch/command_lookup.hpp"
#include "launch/job_state.hpp"
#include "launch/signals.hpp"
#include "launch/spawn.hpp"

namespace gpuscope::launch {
namespace {

// The PATH execvp falls back to when the variable is unset.
constexpr const char* kDefaultSearchPath = "/bin:/usr/bin";

SpawnFailure system_failure(const LaunchOptions& options, const char* call) {
  const int error_number = errno;
  return SpawnFailure{SpawnFailure::Reason::SystemError,
                      options.argv.empty() ? std::string() : options.argv.front(),
                      {},
                      error_number,
                      std::string(call) + ": " + std::strerror(error_number)};
}

struct Pipe {
  UniqueFd read_end;
  UniqueFd write_end;
};

// A pipe whose ends the job does not inherit (close-on-exec; the write end is dup'ed onto the
// job's fd 1 or 2, which clears the flag there), with a non-blocking read end for the loop.
bool make_pipe(Pipe& pipe) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  pipe.read_end.reset(fds[0]);
  pipe.write_end.reset(fds[1]);
  const int flags = ::fcntl(fds[0], F_GETFL);
  return flags >= 0 && ::fcntl(fds[0], F_SETFL, flags | O_NONBLOCK) == 0;
}

}  // namespace

std::vector<std::string> wrap_command(const std::string& script) {
  return {"/bin/sh", "-c", script};
}

JobResult not_started(const SpawnFailure& failure) {
  JobResult result;
  result.status = RunStatus::NotStarted;
  result.exit_code = failure.exit_code();
  result.spawn_failure = failure;
  result.start_wall_ns = result.end_wall_ns = wall_now_ns();
  result.start_mono_ns = result.end_mono_ns = mono_now_ns();
  return result;
}

tl::expected<Job, SpawnFailure> Job::start(const LaunchOptions& options) {
  if (!launcher_signals_blocked()) {
    throw Error("cannot start the job safely",
                "the launcher's signals are not blocked in the calling thread",
                "create a launch::SignalGuard before any thread is started (a gpuscope bug)");
  }
  auto state = std::make_unique<State>();
  state->options = options;

  SpawnRequest request;
  request.argv = options.argv;
  request.env = job_environment(options.extra_env);
  // PATH as the job will see it, so extra_env can point the lookup elsewhere, as env(1) does.
  const std::string search_path = environment_value(request.env, "PATH", kDefaultSearchPath);
  auto path =
      resolve_command(options.argv.empty() ? std::string() : options.argv.front(), search_path);
  if (!path) return tl::unexpected(path.error());
  request.path = *path;

  const sigset_t signals = launcher_signal_set();
  state->signal_fd.reset(::signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC));
  if (!state->signal_fd.valid()) return tl::unexpected(system_failure(options, "signalfd"));

  Pipe out;
  Pipe err;
  if (options.capture_output) {
    if (!make_pipe(out) || !make_pipe(err)) return tl::unexpected(system_failure(options, "pipe"));
    request.stdout_fd = out.write_end.get();
    request.stderr_fd = err.write_end.get();
  }

  if (options.job_control) {
    state->terminal = Terminal::open_controlling();
    if (state->terminal.we_are_foreground()) request.terminal_fd = state->terminal.fd();
  }

  state->start_wall_ns = wall_now_ns();
  state->start_mono_ns = mono_now_ns();
  auto pid = spawn_job(request);
  if (!pid) return tl::unexpected(pid.error());
  state->pid = *pid;
  // Also from this side, as shells do: whichever of the two runs first, the job owns the
  // terminal before it can read from it.
  if (request.terminal_fd >= 0 && !state->terminal.give_to(state->pid)) {
    state->problems.push_back(std::string("could not hand the terminal to the job (") +
                              std::strerror(errno) + "); it may stop when it reads from it");
  }

  // Our copies of the write ends must go, or the pipes never reach end of file.
  out.write_end.reset();
  err.write_end.reset();
  if (options.capture_output) {
    state->channels.emplace_back(OutputStream::Stdout, std::move(out.read_end), STDOUT_FILENO);
    state->channels.emplace_back(OutputStream::Stderr, std::move(err.read_end), STDERR_FILENO);
  }
  // Without pidfd (kernels before 5.3, some sandboxes) the loop learns of the exit from
  // SIGCHLD on the signalfd instead; both are exact, pidfd merely wakes only for this job.
  // Called through syscall(): glibc 2.36's <sys/pidfd.h> lacks extern "C", so it cannot link.
  state->pid_fd.reset(static_cast<int>(::syscall(SYS_pidfd_open, state->pid, 0)));
  return Job(std::move(state));
}

Job::Job(std::unique_ptr<State> state) : state_(std::move(state)) {}
Job::Job(Job&&) noexcept = default;
Job& Job::operator=(Job&& other) noexcept {
  if (this != &other) {
    if (state_ && !state_->waited) abandon_job(*state_);
    state_ = std::move(other.state_);
  }
  return *this;
}
Job::~Job() {
  if (state_ && !state_->waited) abandon_job(*state_);
}

JobResult Job::wait(const JobCallbacks& callbacks) {
  if (state_->waited) {
    throw Error("launch::Job::wait called twice", {}, "this is a gpuscope bug");
  }
  state_->waited = true;
  return wait_for_job(*state_, callbacks);
}

pid_t Job::pid() const {
  return state_->pid;
}
std::int64_t Job::start_wall_ns() const {
  return state_->start_wall_ns;
}
std::int64_t Job::start_mono_ns() const {
  return state_->start_mono_ns;
}

JobResult run_job(const LaunchOptions& options, const JobCallbacks& callbacks) {
  auto job = Job::start(options);
  if (!job) return not_started(job.error());
  return job->wait(callbacks);
}

}  // namespace gpuscope::launch
