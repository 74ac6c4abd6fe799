// `gpuscope jobs`: every GPU job of a period in one table, its totals, the site report, and the
// accounting database's update (docs/fleet.md). The work is app::run_jobs.
#include <memory>

#include "app/fleet/fleet_run.hpp"
#include "cli/command.hpp"
#include "cli/fleet_options.hpp"
#include "cli/number_option.hpp"

namespace gpuscope::cli {

Command add_jobs_command(CLI::App& parent) {
  auto o = std::make_shared<app::JobsRun>();
  CLI::App* app = parent.add_subcommand(
      "jobs",
      "Every GPU job of a period in one table, the most idle GPU-hours first, with totals; "
      "-o site.html for the site report; --update --db FILE keeps them in the accounting "
      "database");
  add_fleet_options(*app, o->fleet);
  app->add_option("-o,--output", o->output, "Write the site report (site.html)")->type_name("FILE");
  app->add_flag("-f,--force-overwrite,--force", o->force, "Overwrite an output file that exists");
  app->add_option("--limit", o->limit,
                  "Rows printed (default 50 as text, all as JSON or CSV; 0: all)")
      ->type_name("N");
  app->add_flag("--update", o->update,
                "Add the jobs that ended since the last update to the database (--db), each "
                "summarised once; for a systemd timer or cron");
  add_number_option(*app, "--settle", o->settle_s, {0, 86'400, "s"},
                    "--update: jobs that ended this recently wait for the next update, so "
                    "slurmdbd and the server have them (default 120)")
      ->type_name("SECONDS");
  add_number_option(*app, "--overlap", o->overlap_s, {0, 30 * 86'400, "s"},
                    "--update: ask again this long before what the database covers, for jobs "
                    "recorded late (default 3600)")
      ->type_name("SECONDS");
  app->add_option("--batch", o->batch,
                  "--update: jobs asked of the server and written per transaction (default 1000)")
      ->type_name("N")
      ->check(CLI::Range(1, 1'000'000));
  return {app, [o] { return app::run_jobs(*o); }};
}

}  // namespace gpuscope::cli
