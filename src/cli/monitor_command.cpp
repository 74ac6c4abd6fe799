// `gpuscope monitor`: its options; the workflow is app/monitor_run.
#include <memory>

#include "app/live/monitor_run.hpp"
#include "cli/command.hpp"
#include "cli/number_option.hpp"

namespace gpuscope::cli {

Command add_monitor_command(CLI::App& parent) {
  auto o = std::make_shared<app::MonitorRun>();
  CLI::App* app = parent.add_subcommand(
      "monitor", "Show a live table of every GPU (utilization, saturation, power, energy, ...)");
  add_backend_options(*app, o->backend);
  add_number_option(*app, "-i,--interval", o->interval_ms, kSamplingMs,
                    "Refresh and sampling interval in ms (default 1000)")
      ->type_name("MS");
  app->add_option("--gpus", o->gpus,
                  "GPUs to show: indices, GPU-/MIG- or AMD UUIDs, or all (default)")
      ->type_name("LIST");
  app->add_flag("--once", o->once, "Print one snapshot and exit (for scripts)");
  app->add_flag("--json", o->json,
                "JSON instead of the table (with --once one object; else one line per interval)");
  app->add_flag("--no-node-energy{false}", o->node_energy,
                "No line of the node's CPU and memory power (RAPL, Grace meters; "
                "docs/node-energy.md)");
  app->add_option("--sysfs-root", o->sysfs_root, "Where sysfs is (node energy)")->group("");
  app->footer("Ctrl-C stops it. The JSON shape is documented in docs/live.md.");
  return {app, [o] { return app::run_monitor(*o); }};
}

}  // namespace gpuscope::cli
