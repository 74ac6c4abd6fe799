// Which signals gpuscope passes on to the job, and the signal mask that makes passing them on
// possible. A signal can only be read from a signalfd when every thread of the process blocks it;
// otherwise the kernel delivers it to some thread that does not, and its default action kills
// gpuscope. Threads inherit their creator's mask, so the mask must be set before any thread
// exists: the CLI creates a SignalGuard first thing in `profile`.
#pragma once

#include <signal.h>

#include <array>
#include <string>

namespace gpuscope::launch {

// Signals that gpuscope forwards to the job's process group instead of dying from them.
inline constexpr std::array<int, 6> kForwardedSignals = {SIGINT,  SIGTERM, SIGHUP,
                                                         SIGQUIT, SIGUSR1, SIGUSR2};

// The forwarded signals plus SIGCHLD (how the launcher learns of the job's stops and, where
// pidfd is unavailable, its exit): the set a SignalGuard blocks.
sigset_t launcher_signal_set();

// True when the calling thread blocks every signal of launcher_signal_set().
bool launcher_signals_blocked();

// "SIGTERM" for SIGTERM; "signal 42" for numbers without a name.
std::string signal_name(int signal_number);

// Blocks launcher_signal_set() in the calling thread for its lifetime. Create it before any
// other thread so that all threads inherit the mask. On destruction it discards those signals
// still pending (they arrived after the job ended and were meant for the job, not for gpuscope)
// and restores the previous mask.
class SignalGuard {
 public:
  SignalGuard();
  ~SignalGuard();
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

 private:
  sigset_t previous_mask_{};
};

}  // namespace gpuscope::launch
