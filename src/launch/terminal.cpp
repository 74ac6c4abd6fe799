#include "launch/terminal.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

namespace gpuscope::launch {
namespace {

// tcsetpgrp from a background group raises SIGTTOU, whose default action stops gpuscope;
// the kernel lets the call through when the caller blocks it. Blocking only this thread's
// mask avoids touching process-wide dispositions that other threads may rely on.
bool set_foreground_group(int fd, pid_t pgid) {
  sigset_t ttou;
  sigemptyset(&ttou);
  sigaddset(&ttou, SIGTTOU);
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &ttou, &previous);
  const bool done = tcsetpgrp(fd, pgid) == 0;
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return done;
}

}  // namespace

Terminal Terminal::open_controlling() {
  return Terminal(UniqueFd(::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)));
}

bool Terminal::we_are_foreground() const {
  return present() && tcgetpgrp(fd()) == getpgrp();
}

bool Terminal::held_by(pid_t pgid) const {
  return present() && tcgetpgrp(fd()) == pgid;
}

bool Terminal::give_to(pid_t pgid) const {
  return present() && set_foreground_group(fd(), pgid);
}

void Terminal::take_back_from(pid_t pgid) const {
  if (held_by(pgid)) set_foreground_group(fd(), getpgrp());
}

}  // namespace gpuscope::launch
