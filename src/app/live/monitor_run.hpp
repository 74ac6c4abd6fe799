// `gpuscope monitor`: a live table of every GPU, redrawn in place, with the node's CPU and memory
// power under it where the node exposes RAPL or Grace meters; --once for one snapshot.
#pragma once

#include <string>

#include "collect/backend.hpp"

namespace gpuscope::app {

struct MonitorRun {
  collect::BackendOptions backend;
  double interval_ms = 1000;
  std::string gpus;
  bool once = false;
  bool json = false;
  bool node_energy = true;          // --no-node-energy: no CPU power line
  std::string sysfs_root = "/sys";  // hidden --sysfs-root (tests)
};

// Runs until SIGINT or SIGTERM (or one snapshot with `once`); returns the exit code. Throws Error.
int run_monitor(const MonitorRun& o);

}  // namespace gpuscope::app
