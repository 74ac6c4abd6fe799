// The nodes as sinfo shows them, for the drains (docs/guard.md, "Broken GPUs"): one line per node
// and partition, `sinfo --Node --noheader --format=%N|%R|%T`, a format every Slurm since 2.x
// prints the same (its --json changed shape twice). A line that is not of that form is counted
// and quoted, never guessed at.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "guard/node_health.hpp"

namespace gpuscope::guard {

struct SinfoRead {
  std::vector<SlurmNode> nodes;         // in name order, each with every partition it is in
  std::vector<std::string> unreadable;  // the first 5 lines that could not be read
  std::size_t unreadable_count = 0;
};

// sinfo's arguments for read_sinfo.
std::vector<std::string> sinfo_arguments();

// The nodes in sinfo's output. A node is out of service when its state (the long form: "idle",
// "drained", "draining", "down*", "mixed~") is drained, draining, down, failing, failed or not
// valid; the suffixes (* not responding, ~ powered down, # powering up, ! powering down,
// % powering down, $ maintenance, @ reboot pending, ^ rebooting, - planned) are not states.
SinfoRead read_sinfo(std::string_view text);

}  // namespace gpuscope::guard
