// The waiting side of a job: one poll() loop over the signalfd, the pidfd and the output pipes,
// with a timeout for the time limit, the kill grace and the tick cadence. It depends on nothing
// but the job, so trouble in the sampler or the store can never stall it.
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <exception>
#include <optional>

#include "core/clock.hpp"
#include "core/event_kinds.hpp"
#include "launch/job_state.hpp"
#include "launch/signals.hpp"

namespace gpuscope::launch {
namespace {

constexpr std::int64_t kNsPerMs = 1'000'000;
// How long output is still read once the job exited. Its pipes normally reach end of file at
// once; when a background process it left behind still holds them, gpuscope stops reading
// after this rather than waiting for that process.
constexpr std::int64_t kOutputDrainNs = 1000 * kNsPerMs;

std::int64_t to_ns(std::chrono::milliseconds duration) {
  return duration.count() * kNsPerMs;
}

// "60 s" or "300 ms": the limit as the user would have written it.
std::string format_duration(std::chrono::milliseconds duration) {
  const auto ms = duration.count();
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  return std::to_string(ms) + " ms";
}

// While waiting, a passthrough write to a closed stdout must fail with EPIPE rather than kill
// gpuscope with SIGPIPE. Blocking it in this thread suffices (the signal is sent to the thread
// that wrote); a SIGPIPE left pending by such a write is consumed before the mask is restored.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&sigpipe_);
    sigaddset(&sigpipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &sigpipe_, &previous_);
  }
  ~SigpipeBlock() {
    if (sigismember(&previous_, SIGPIPE) != 1) {
      const timespec no_wait{0, 0};
      while (sigtimedwait(&sigpipe_, nullptr, &no_wait) > 0) {
      }
      pthread_sigmask(SIG_UNBLOCK, &sigpipe_, nullptr);
    }
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t sigpipe_{};
  sigset_t previous_{};
};

class WaitLoop {
 public:
  WaitLoop(Job::State& state, const JobCallbacks& callbacks)
      : state_(state), callbacks_(callbacks) {}

  JobResult run();

 private:
  void emit(EventKind kind, std::string detail);
  template <typename Call>
  void guarded(bool& disabled, const char* name, Call&& call);
  void read_signals();
  void forward(int signal_number);
  bool signal_job(int signal_number) const;
  void check_child();
  void record_exit(const siginfo_t& info);
  void lost_child();
  void on_stopped(int signal_number);
  void enforce_deadlines(std::int64_t now_ns);
  int poll_timeout_ms(std::int64_t now_ns) const;
  bool output_open() const;
  void stop_reading_output();
  void poll_once();

  Job::State& state_;
  const JobCallbacks& callbacks_;
  OutputChannel::LineSink line_sink_;
  JobResult result_;
  bool exited_ = false;
  bool reaped_elsewhere_ = false;
  bool timed_out_ = false;
  bool output_callback_failed_ = false;
  bool event_callback_failed_ = false;
  bool tick_callback_failed_ = false;
  bool poll_failed_ = false;
  std::optional<std::int64_t> term_at_ns_;
  std::optional<std::int64_t> kill_at_ns_;
  std::optional<std::int64_t> drain_until_ns_;
  std::int64_t next_tick_ns_ = 0;
};

template <typename Call>
void WaitLoop::guarded(bool& disabled, const char* name, Call&& call) {
  if (disabled) return;
  // The job must outlive any failure of whoever listens to it: a throwing callback is switched
  // off and reported, and waiting goes on.
  try {
    call();
  } catch (const std::exception& e) {
    disabled = true;
    result_.problems.push_back(std::string(name) + " failed (" + e.what() +
                               "); it is no longer called for this job");
  } catch (...) {
    disabled = true;
    result_.problems.push_back(std::string(name) +
                               " failed (unknown exception); it is no longer called for this job");
  }
}

void WaitLoop::emit(EventKind kind, std::string detail) {
  if (!callbacks_.on_event) return;
  const Event event{wall_now_ns(), mono_now_ns(), std::nullopt, kind, std::move(detail)};
  guarded(event_callback_failed_, "the event callback", [&] { callbacks_.on_event(event); });
}

JobResult WaitLoop::run() {
  const SigpipeBlock sigpipe_block;
  result_.pid = state_.pid;
  result_.start_wall_ns = state_.start_wall_ns;
  result_.start_mono_ns = state_.start_mono_ns;
  result_.problems = state_.problems;
  line_sink_ = [this](OutputLine line) {
    if (!callbacks_.on_output) return;
    guarded(output_callback_failed_, "the output callback", [&] { callbacks_.on_output(line); });
  };
  if (state_.options.max_runtime.count() > 0) {
    term_at_ns_ = state_.start_mono_ns + to_ns(state_.options.max_runtime);
  }
  next_tick_ns_ = mono_now_ns() + to_ns(callbacks_.tick_interval);
  emit(EventKind::JobStart, "started " + state_.options.argv.front() + " (pid " +
                                std::to_string(state_.pid) + ", its own process group)");

  check_child();
  while (!exited_ || output_open()) {
    const std::int64_t now_ns = mono_now_ns();
    enforce_deadlines(now_ns);
    if (exited_ && drain_until_ns_ && now_ns >= *drain_until_ns_) {
      stop_reading_output();
      break;
    }
    if (callbacks_.on_tick && now_ns >= next_tick_ns_) {
      guarded(tick_callback_failed_, "the tick callback", [&] { callbacks_.on_tick(); });
      next_tick_ns_ = now_ns + to_ns(callbacks_.tick_interval);
    }
    poll_once();
    check_child();
  }

  if (!reaped_elsewhere_) {
    siginfo_t info{};
    while (waitid(P_PID, static_cast<id_t>(state_.pid), &info, WEXITED) != 0 && errno == EINTR) {
    }
  }
  emit(EventKind::JobExit, describe_exit(result_));
  return result_;
}

void WaitLoop::poll_once() {
  std::vector<pollfd> fds;
  fds.push_back({state_.signal_fd.get(), POLLIN, 0});
  // Once the job has exited its pidfd stays readable; polling it would spin.
  if (state_.pid_fd.valid() && !exited_) fds.push_back({state_.pid_fd.get(), POLLIN, 0});
  for (const OutputChannel& channel : state_.channels) {
    if (channel.is_open()) fds.push_back({channel.fd(), POLLIN, 0});
  }
  const int ready = ::poll(fds.data(), fds.size(), poll_timeout_ms(mono_now_ns()));
  if (ready < 0 && errno != EINTR) {
    if (!poll_failed_) {
      result_.problems.push_back(std::string("poll failed (") + std::strerror(errno) +
                                 "); checking the job every 10 ms instead");
      poll_failed_ = true;
    }
    ::usleep(10'000);  // keeps a persistent failure from spinning a core
  }
  read_signals();
  for (OutputChannel& channel : state_.channels) {
    if (channel.is_open()) channel.pump(line_sink_, result_.problems);
  }
}

void WaitLoop::read_signals() {
  std::array<signalfd_siginfo, 8> infos{};
  for (;;) {
    const ssize_t bytes = ::read(state_.signal_fd.get(), infos.data(), sizeof(infos));
    if (bytes < 0 && errno == EINTR) continue;
    if (bytes <= 0) return;  // EAGAIN: nothing pending
    const auto count = static_cast<std::size_t>(bytes) / sizeof(signalfd_siginfo);
    for (std::size_t i = 0; i < count; ++i) {
      const int signal_number = static_cast<int>(infos[i].ssi_signo);
      // SIGCHLD only wakes the loop; check_child() looks at the job after every wake-up.
      if (signal_number != SIGCHLD) forward(signal_number);
    }
  }
}

void WaitLoop::forward(int signal_number) {
  // The job's pid is not reaped before the loop ends, so its process group id cannot have been
  // reused by anyone else while we signal it.
  const std::string name = signal_name(signal_number);
  if (signal_job(signal_number)) {
    emit(EventKind::Signal, name + " forwarded to the job");
  } else {
    emit(EventKind::Signal, name + " received but not forwarded (" + std::strerror(errno) + ")");
  }
}

bool WaitLoop::signal_job(int signal_number) const {
  if (::kill(-state_.pid, signal_number) == 0) return true;
  // The job's first process left its group (setsid) and nothing else is in it: signal it
  // directly rather than not at all.
  return errno == ESRCH && ::kill(state_.pid, signal_number) == 0;
}

void WaitLoop::check_child() {
  if (exited_) return;
  const auto id = static_cast<id_t>(state_.pid);
  siginfo_t info{};
  // WNOWAIT leaves the job a zombie, keeping its pid (the group id we signal) reserved.
  if (waitid(P_PID, id, &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    if (errno == ECHILD) lost_child();
    return;
  }
  if (info.si_pid == state_.pid) {
    record_exit(info);
    return;
  }
  info = siginfo_t{};
  if (waitid(P_PID, id, &info, WSTOPPED | WCONTINUED | WNOHANG) != 0 || info.si_pid == 0) return;
  if (info.si_code == CLD_CONTINUED) {
    emit(EventKind::JobContinue, "the job was continued");
  } else {
    on_stopped(info.si_status);
  }
}

void WaitLoop::record_exit(const siginfo_t& info) {
  exited_ = true;
  result_.end_wall_ns = wall_now_ns();
  result_.end_mono_ns = mono_now_ns();
  if (info.si_code == CLD_EXITED) {
    result_.status = RunStatus::Finished;
    result_.exit_code = info.si_status;
  } else {
    result_.status = RunStatus::Signaled;
    result_.term_signal = info.si_status;
    result_.core_dumped = info.si_code == CLD_DUMPED;
    result_.exit_code = 128 + info.si_status;
  }
  if (timed_out_) {
    result_.status = RunStatus::TimedOut;
    // A time limit ends the whole job, not just its first process.
    ::kill(-state_.pid, SIGKILL);
  }
  state_.terminal.take_back_from(state_.pid);
  drain_until_ns_ = result_.end_mono_ns + kOutputDrainNs;
}

void WaitLoop::lost_child() {
  // Someone else in gpuscope reaped the job (waitpid(-1) or SIGCHLD set to SIG_IGN): the exit
  // status is gone, and saying so beats inventing one.
  exited_ = true;
  reaped_elsewhere_ = true;
  result_.end_wall_ns = wall_now_ns();
  result_.end_mono_ns = mono_now_ns();
  result_.status = timed_out_ ? RunStatus::TimedOut : RunStatus::Finished;
  result_.exit_code = 1;
  result_.problems.push_back(
      "the job's exit status was collected by another part of gpuscope and is unknown");
  state_.terminal.take_back_from(state_.pid);
  drain_until_ns_ = result_.end_mono_ns + kOutputDrainNs;
}

void WaitLoop::on_stopped(int signal_number) {
  emit(EventKind::JobStop, "the job was stopped by " + signal_name(signal_number));
  if (!state_.options.job_control || !state_.terminal.present()) return;
  // Do what the terminal would have done had the job been in gpuscope's process group: stop
  // gpuscope's group too, so the user's shell sees the job stopped and takes the terminal back.
  // kill() returns once the shell continues us (fg or bg).
  state_.terminal.take_back_from(state_.pid);
  ::kill(0, SIGTSTP);
  if (state_.terminal.we_are_foreground()) state_.terminal.give_to(state_.pid);
  signal_job(SIGCONT);
}

void WaitLoop::enforce_deadlines(std::int64_t now_ns) {
  if (exited_) return;
  if (term_at_ns_ && !timed_out_ && now_ns >= *term_at_ns_) {
    timed_out_ = true;
    signal_job(SIGTERM);
    signal_job(SIGCONT);  // a stopped job would otherwise never see the SIGTERM
    emit(EventKind::MaxRuntime, "max runtime of " + format_duration(state_.options.max_runtime) +
                                    " reached: SIGTERM sent");
    kill_at_ns_ = now_ns + to_ns(state_.options.kill_grace);
  }
  if (kill_at_ns_ && now_ns >= *kill_at_ns_) {
    signal_job(SIGKILL);
    emit(EventKind::MaxRuntime, "the job was still running " +
                                    format_duration(state_.options.kill_grace) +
                                    " after SIGTERM: SIGKILL sent");
    kill_at_ns_.reset();
  }
}

int WaitLoop::poll_timeout_ms(std::int64_t now_ns) const {
  std::optional<std::int64_t> wake_ns;
  const auto consider = [&](std::optional<std::int64_t> at_ns) {
    if (at_ns) wake_ns = wake_ns ? std::min(*wake_ns, *at_ns) : *at_ns;
  };
  if (!exited_ && !timed_out_) consider(term_at_ns_);
  if (!exited_) consider(kill_at_ns_);
  if (exited_) consider(drain_until_ns_);
  if (callbacks_.on_tick) consider(next_tick_ns_);
  if (!wake_ns) return -1;
  const std::int64_t wait_ns = std::max<std::int64_t>(0, *wake_ns - now_ns);
  // Rounded up: waking a little early would only go round the loop for nothing.
  return static_cast<int>(std::min<std::int64_t>((wait_ns + kNsPerMs - 1) / kNsPerMs, 60'000));
}

bool WaitLoop::output_open() const {
  return std::any_of(state_.channels.begin(), state_.channels.end(),
                     [](const OutputChannel& channel) { return channel.is_open(); });
}

void WaitLoop::stop_reading_output() {
  if (output_open()) {
    result_.problems.push_back(
        "the job exited but a process it started still holds its output open; gpuscope "
        "stopped capturing 1 s after the exit (that process's later writes fail)");
  }
  for (OutputChannel& channel : state_.channels) channel.close(line_sink_);
}

}  // namespace

JobResult wait_for_job(Job::State& state, const JobCallbacks& callbacks) {
  return WaitLoop(state, callbacks).run();
}

void abandon_job(Job::State& state) {
  if (::kill(-state.pid, SIGKILL) != 0) ::kill(state.pid, SIGKILL);
  while (::waitpid(state.pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  state.terminal.take_back_from(state.pid);
}

}  // namespace gpuscope::launch
