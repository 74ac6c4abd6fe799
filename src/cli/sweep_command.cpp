// `gpuscope sweep`: run a command under several power limits (or locked SM clocks), measure
// each, recommend the best, and put the GPUs back as they were (docs/sweep.md).
#include <memory>

#include "app/sweep/sweep_options.hpp"
#include "cli/command.hpp"
#include "cli/number_option.hpp"

namespace gpuscope::cli {

Command add_sweep_command(CLI::App& parent) {
  auto o = std::make_shared<app::SweepOptions>();
  CLI::App* app = parent.add_subcommand(
      "sweep", "Run a command under several power limits and recommend the most efficient one");
  app->footer(
      "Usage: gpuscope sweep --power-limits 200:700:50 [OPTIONS] -o sweep.db -- CMD [ARGS...]\n"
      "       gpuscope sweep --restore [-o sweep.db]\n"
      "Setting limits needs root. The GPUs' limits are written to <output>.restore.json before "
      "anything changes and put back at the end, on failure, on Ctrl-C/SIGTERM; if gpuscope is "
      "killed, 'gpuscope sweep --restore -o <output>' puts them back. Exit status: 0, the failing "
      "job's status, or 128+N after signal N. docs/sweep.md has the details.");
  add_backend_options(*app, o->backend);
  app->add_option(
         "--power-limits", o->power_limits,
         "Power limits to try, in W: start:stop:step (200:700:50) or a list (300,400,500); "
         "the default limit is always added as the baseline")
      ->type_name("W");
  app->add_option("--clocks", o->clocks,
                  "Locked SM clocks to try instead, in MHz (same forms); the baseline is unlocked "
                  "clocks")
      ->type_name("MHz");
  app->add_option("--gpus", o->gpus,
                  "GPUs to set and measure: NVML indices, UUIDs or all (default: the GPUs the job "
                  "may see, else all)")
      ->type_name("LIST");
  add_number_option(*app, "--repeat", o->repeat, NumberRange(1, 1000).whole(),
                    "Runs per setting (default 1); 3 or more flag outliers")
      ->type_name("N");
  add_number_option(*app, "--warmup", o->warmup_s, {0, 86'400, "s"},
                    "Seconds at the start of each run left out of time, energy and work "
                    "(default 0)")
      ->type_name("S");
  add_number_option(*app, "--settle", o->settle_s, {0, 3600, "s"},
                    "Seconds to wait after changing the setting before each run (default 1)")
      ->type_name("S");
  app->add_option("--max-slowdown", o->max_slowdown,
                  "Slowdown bound of the bounded recommendation (default 10%)")
      ->type_name("PCT");
  add_number_option(*app, "--eta", o->eta, {0, 1},
                    "Zeus's weight of energy against time (default 0.5)")
      ->type_name("ETA");
  app->add_option("--work-regex", o->work_regex,
                  "Work done, from the job's output: the first group of each match is summed, "
                  "e.g. 'processed ([0-9]+) samples'")
      ->type_name("REGEX");
  add_number_option(*app, "--work-units", o->work_units, kWorkUnits,
                    "Work each run does (e.g. 1000 samples)")
      ->type_name("N");
  app->add_option("--window-begin", o->window_begin,
                  "Measure from the first output line that matches (start-up left out); a group "
                  "is the job's own time.monotonic() in seconds, e.g. 'work begins at ([0-9.]+)'")
      ->type_name("REGEX");
  app->add_option("--window-end", o->window_end,
                  "Measure up to the first matching line after the begin (default: the job's "
                  "end); a group is the job's own time.monotonic()")
      ->type_name("REGEX");
  app->add_option("-o,--output", o->output,
                  "Sweep database (default sweep.db); the table, CSV, JSON, plot and HTML go "
                  "beside it")
      ->type_name("PATH");
  app->add_flag("-f,--force-overwrite", o->force, "Replace an existing output file");
  app->add_flag("--dry-run", o->dry_run,
                "Check permissions and limits and print the plan; change nothing, run nothing");
  app->add_flag("--restore", o->restore,
                "Put back the limits recorded by a sweep that did not finish (-o names it)");
  add_number_option(*app, "-s,--sampling-ms", o->sampling_ms, kSamplingMs,
                    "Sampling interval in ms (default 100)")
      ->type_name("MS");
  app->add_flag("-q,--quiet", o->quiet, "No plan and no progress on stderr");
  app->add_option("command", o->command, "The command to run, after --")->type_name("CMD ARGS");
  app->positionals_at_end(false);
  return {app, [o] { return app::run_sweep(*o); }};
}

}  // namespace gpuscope::cli
