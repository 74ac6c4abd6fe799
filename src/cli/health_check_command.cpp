// `gpuscope health-check`: the node's GPUs checked now, for Slurm's HealthCheckProgram, Prolog
// and Epilog (docs/guard.md). The work is app::run_health_check.
#include <memory>

#include "app/guard/health_check_run.hpp"
#include "cli/command.hpp"

namespace gpuscope::cli {

Command add_health_check_command(CLI::App& parent) {
  auto o = std::make_shared<app::HealthCheckOptions>();
  CLI::App* app = parent.add_subcommand(
      "health-check",
      "Check this node's GPUs now (Slurm's HealthCheckProgram, Prolog, Epilog): exit 0 healthy, "
      "1 unhealthy with the reason, 3 when the check could not be made");
  add_backend_options(*app, o->backend);
  app->add_option("--rules", o->rules, "guard's rules file: its health section (docs/guard.md)")
      ->type_name("FILE");
  app->add_option("--expect-gpus", o->expect_gpus,
                  "The GPUs this node must have: fewer (or none listed) is unhealthy")
      ->check(CLI::Range(0, 1024))
      ->type_name("N");
  app->add_option("--dcgm-diag", o->dcgm_diag,
                  "Run dcgmi diag -r LEVEL where DCGM is installed (1: seconds; default: the "
                  "rules' dcgm_diag, else none)")
      ->check(CLI::Range(0, 4))
      ->type_name("LEVEL");
  app->add_flag("--drain", o->drain,
                "When unhealthy, drain the node with the reason (scontrol; a HealthCheckProgram "
                "must drain by itself)");
  app->add_option("--node", o->node,
                  "The node's Slurm name (default: SLURMD_NODENAME, else the short host name)")
      ->type_name("NAME");
  app->add_flag("--json", o->json, "Print JSON (shape in docs/guard.md)");
  return {app, [o] { return app::run_health_check(*o); }};
}

}  // namespace gpuscope::cli
