#include "launch/signals.hpp"

#include <pthread.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace gpuscope::launch {

sigset_t launcher_signal_set() {
  sigset_t set;
  sigemptyset(&set);
  for (const int signal_number : kForwardedSignals) sigaddset(&set, signal_number);
  sigaddset(&set, SIGCHLD);
  return set;
}

bool launcher_signals_blocked() {
  sigset_t current;
  pthread_sigmask(SIG_BLOCK, nullptr, &current);
  const sigset_t wanted = launcher_signal_set();
  for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
    if (sigismember(&wanted, signal_number) == 1 && sigismember(&current, signal_number) != 1) {
      return false;
    }
  }
  return true;
}

std::string signal_name(int signal_number) {
  // sigabbrev_np (glibc 2.32) gives "TERM"; it returns null for real-time and unknown numbers.
  if (const char* abbreviation = sigabbrev_np(signal_number); abbreviation != nullptr) {
    return std::string("SIG") + abbreviation;
  }
  return "signal " + std::to_string(signal_number);
}

SignalGuard::SignalGuard() {
  const sigset_t set = launcher_signal_set();
  pthread_sigmask(SIG_BLOCK, &set, &previous_mask_);
}

SignalGuard::~SignalGuard() {
  // Unblocking a pending SIGINT would kill gpuscope after the job ended and lose its exit
  // status, so take the pending ones first (a zero timeout only polls).
  const sigset_t set = launcher_signal_set();
  const timespec no_wait{0, 0};
  while (sigtimedwait(&set, nullptr, &no_wait) > 0 || errno == EINTR) {
  }
  pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
}

}  // namespace gpuscope::launch
