#include "launch/spawn.hpp"

#include <pthread.h>
#include <signal.h>
#include <spawn.h>

#include <cerrno>
#include <cstring>

#include "launch/signals.hpp"

extern char** environ;

namespace gpuscope::launch {
namespace {

// posix_spawn's C interface wants mutable char*; it does not write through them.
std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (const std::string& s : strings) pointers.push_back(const_cast<char*>(s.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

// The job's mask: the caller's, without the signals the launcher blocked for itself.
sigset_t job_signal_mask() {
  sigset_t mask;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  const sigset_t ours = launcher_signal_set();
  for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
    if (sigismember(&ours, signal_number) == 1) sigdelset(&mask, signal_number);
  }
  sigdelset(&mask, SIGPIPE);
  return mask;
}

// Signals reset to their default action in the job. A signal gpuscope ignores stays ignored
// (nohup gpuscope ... must keep the job immune to SIGHUP, as with any wrapper), except SIGPIPE
// and SIGCHLD: a job inheriting those ignored misbehaves in ways nobody would trace to gpuscope.
sigset_t job_default_signals() {
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGCHLD);
  for (const int signal_number : kForwardedSignals) {
    struct sigaction action {};
    if (sigaction(signal_number, nullptr, &action) == 0 && action.sa_handler != SIG_IGN) {
      sigaddset(&defaults, signal_number);
    }
  }
  return defaults;
}

SpawnFailure exec_failure(const SpawnRequest& request, int error_number) {
  SpawnFailure failure{SpawnFailure::Reason::NotExecutable, request.argv.front(), request.path,
                       error_number, std::strerror(error_number)};
  if (error_number == ENOMEM || error_number == EAGAIN) {
    failure.reason = SpawnFailure::Reason::SystemError;
  } else if (error_number == ENOENT) {
    // The file exists (it was just looked up), so what is missing is its #! interpreter or
    // its ELF loader; bash says "bad interpreter" and exits 126 here.
    failure.error_text += ": bad interpreter or missing loader";
  }
  return failure;
}

int spawn_once(const SpawnRequest& request, bool hand_terminal, pid_t& pid) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (request.stdout_fd >= 0) posix_spawn_file_actions_adddup2(&actions, request.stdout_fd, 1);
  if (request.stderr_fd >= 0) posix_spawn_file_actions_adddup2(&actions, request.stderr_fd, 2);
  // Done in the child too (it runs with all signals blocked there, so SIGTTOU cannot stop it):
  // the job must own the terminal before its first read, which the parent alone cannot ensure.
  if (hand_terminal) posix_spawn_file_actions_addtcsetpgrp_np(&actions, request.terminal_fd);

  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attributes, 0);
  const sigset_t mask = job_signal_mask();
  posix_spawnattr_setsigmask(&attributes, &mask);
  const sigset_t defaults = job_default_signals();
  posix_spawnattr_setsigdefault(&attributes, &defaults);

  std::vector<char*> argv = c_strings(request.argv);
  std::vector<char*> envp = c_strings(request.env);
  const int rc =
      posix_spawn(&pid, request.path.c_str(), &actions, &attributes, argv.data(), envp.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  return rc;
}

}  // namespace

std::vector<std::string> job_environment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text(*entry);
    const std::size_t equals = text.find('=');
    if (equals != std::string::npos && extra.count(text.substr(0, equals)) != 0) continue;
    env.push_back(text);
  }
  for (const auto& [name, value] : extra) env.push_back(name + "=" + value);
  return env;
}

std::string environment_value(const std::vector<std::string>& env, const std::string& name,
                              const std::string& fallback) {
  const std::string prefix = name + "=";
  for (const std::string& entry : env) {
    if (entry.compare(0, prefix.size(), prefix) == 0) return entry.substr(prefix.size());
  }
  return fallback;
}

tl::expected<pid_t, SpawnFailure> spawn_job(const SpawnRequest& request) {
  pid_t pid = -1;
  int rc = spawn_once(request, request.terminal_fd >= 0, pid);
  if (rc != 0 && request.terminal_fd >= 0) {
    // A failed terminal hand-over fails the whole spawn; the job matters more than the
    // terminal, so try once more without it (the caller still hands it over from outside).
    pid_t retry_pid = -1;
    if (spawn_once(request, false, retry_pid) == 0) {
      pid = retry_pid;
      rc = 0;
    }
  }
  if (rc != 0) return tl::unexpected(exec_failure(request, rc));
  return pid;
}

}  // namespace gpuscope::launch
