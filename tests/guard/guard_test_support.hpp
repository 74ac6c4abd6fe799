// What guard's cycle tests share: the Slurm commands as scripts, and one cycle run the way
// guard_run runs it (the rules' templates, a notifier, the context).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "app/guard/guard_cycle.hpp"

namespace gpuscope::app::testing {

// A shell script at `path` with `body`, executable.
inline void script(const std::string& path, const std::string& body) {
  std::ofstream(path) << "#!/bin/sh\n" << body;
  chmod(path.c_str(), 0755);
}

// One cycle at `now_ms`, enforcing or a dry run.
inline CycleTally one_cycle(const GuardRun& run, const guard::Rules& rules,
                            store::GuardState& state, tsdb::Source& source, std::int64_t now_ms,
                            bool enforce) {
  const GuardTemplates templates = load_templates(rules);
  Notifier notifier(rules, enforce, state);
  GuardContext c{run, rules, templates, enforce, state, notifier};
  return run_cycle(c, source, now_ms);
}

}  // namespace gpuscope::app::testing
