// `gpuscope guard`: the site's running GPU jobs watched in cycles; idle jobs warned, then
// cancelled, GPUs too large advised (docs/guard.md). The work is app::run_guard.
#include <memory>

#include "app/guard/guard_run.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"
#include "guard/rules.hpp"

namespace gpuscope::cli {

Command add_guard_command(CLI::App& parent) {
  auto o = std::make_shared<app::GuardRun>();
  auto interval = std::make_shared<std::string>();
  CLI::App* app = parent.add_subcommand(
      "guard",
      "Watch the running GPU jobs: warn about idle GPUs, cancel what stays idle, advise on GPUs "
      "too large (a dry run until the rules say enforce: true)");
  app->add_option("--rules", o->rules, "The rules file (YAML, docs/guard.md)")
      ->type_name("FILE")
      ->required();
  app->add_flag("--once", o->once, "One cycle, then exit (for cron or a systemd timer)");
  app->add_option("--interval", *interval,
                  "Between cycles: 5m, 90s, 1h (default: the rules' interval)")
      ->type_name("DURATION");
  app->add_flag("--dry-run", o->dry_run,
                "Do and send nothing, say what enforcing would do (whatever the rules say)");
  app->add_option("--state", o->state, "guard's state database (default: the rules' state)")
      ->type_name("FILE");
  app->add_option("--prometheus", o->server,
                  "The monitoring server (Prometheus or VictoriaMetrics URL; default: the "
                  "site's configuration, as gpuscope job reads it)")
      ->type_name("URL");
  app->add_option("--config", o->config, "The site's configuration file (docs/jobs.md)")
      ->type_name("FILE");
  return {app, [o, interval] {
            if (!interval->empty()) {
              const auto seconds = guard::parse_duration_s(*interval);
              if (!seconds || *seconds < 10 || *seconds > 86'400) {
                throw Error::usage(
                    "--interval " + *interval + " is not a duration from 10 s to 1 d", {},
                    "give 5m, 90s or 1h");
              }
              o->interval_s = *seconds;
            }
            return app::run_guard(*o);
          }};
}

}  // namespace gpuscope::cli
