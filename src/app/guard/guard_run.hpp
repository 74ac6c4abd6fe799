// `gpuscope guard` (docs/guard.md): the running GPU jobs watched in cycles. Each cycle reads
// squeue, asks the monitoring server about each job's GPUs since the last cycle (many jobs per
// query), judges them (guard/idle_judgement), takes the steps they earned (warnings, scancel
// with the reason in the job's AdminComment, advice), tells people (guard/notifier), and keeps
// what it did in the state database and the audit. A dry run (the default until the rules say
// `enforce: true`) does and sends nothing but says exactly what enforcing would.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpuscope::app {

struct GuardRun {
  std::string rules;                       // --rules FILE
  bool once = false;                       // --once: one cycle, then exit
  std::optional<std::int64_t> interval_s;  // --interval (else the rules')
  bool dry_run = false;                    // --dry-run: never act, whatever the rules say
  std::optional<std::string> state;        // --state FILE (else the rules')
  std::optional<std::string> server;       // --prometheus URL
  std::optional<std::string> config;       // --config FILE (the site's, as `job` reads it)
  // The Slurm commands, from PATH unless GPUSCOPE_SQUEUE, GPUSCOPE_SCANCEL, GPUSCOPE_SCONTROL,
  // GPUSCOPE_SINFO name others.
  std::string squeue = "squeue";
  std::string sinfo = "sinfo";
  std::string scancel = "scancel";
  std::string scontrol = "scontrol";
};

// Runs cycles until a signal (SIGTERM, SIGINT) or, with --once, one; 0 when the last cycle
// succeeded, 1 when it failed or the circuit breaker held actions back.
int run_guard(GuardRun o);

}  // namespace gpuscope::app
