// gpuscope's controlling terminal and its foreground process group. The job runs in a process
// group of its own, so while it runs the terminal must be handed to that group, as a
// job-control shell does: otherwise an interactive job is stopped by SIGTTIN when it reads, and
// Ctrl-C and Ctrl-Z reach gpuscope instead of the job.
#pragma once

#include <sys/types.h>

#include "launch/unique_fd.hpp"

namespace gpuscope::launch {

class Terminal {
 public:
  // An inert terminal: no controlling terminal, nothing is handed over.
  Terminal() = default;
  // The controlling terminal (/dev/tty), or an inert object when there is none.
  static Terminal open_controlling();

  // True when gpuscope has a controlling terminal.
  bool present() const { return fd_.valid(); }
  // The terminal's descriptor, or -1.
  int fd() const { return fd_.get(); }
  // True when gpuscope's process group is the terminal's foreground group.
  bool we_are_foreground() const;
  // True when `pgid` is the terminal's foreground group.
  bool held_by(pid_t pgid) const;
  // Makes `pgid` the foreground group; false if the terminal refused.
  bool give_to(pid_t pgid) const;
  // Gives the terminal back to gpuscope's process group if `pgid` holds it.
  void take_back_from(pid_t pgid) const;

 private:
  explicit Terminal(UniqueFd fd) : fd_(std::move(fd)) {}

  UniqueFd fd_;
};

}  // namespace gpuscope::launch
