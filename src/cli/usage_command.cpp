// `gpuscope usage`: GPU-hours, idle GPU-hours, energy, CO2 and efficiency per user, account,
// partition, GPU model, day or week (docs/fleet.md). The work is app::run_usage.
#include <memory>

#include "app/fleet/fleet_run.hpp"
#include "cli/command.hpp"
#include "cli/fleet_options.hpp"
#include "core/error.hpp"
#include "fleet/usage.hpp"

namespace gpuscope::cli {

Command add_usage_command(CLI::App& parent) {
  auto o = std::make_shared<app::UsageRun>();
  auto by = std::make_shared<std::string>("user");
  CLI::App* app = parent.add_subcommand(
      "usage",
      "GPU-hours, idle GPU-hours, energy, CO2 and efficiency of a period's GPU jobs per user, "
      "account, partition, GPU model, day or week");
  app->add_option("--by", *by, "user, account, partition, gpu-model, day or week (default user)")
      ->type_name("GROUP");
  add_fleet_options(*app, o->fleet);
  return {app, [o, by] {
            const auto parsed = fleet::parse_usage_by(*by);
            if (!parsed) {
              throw Error::usage("--by " + *by + " is not a grouping", {},
                                 "give user, account, partition, gpu-model, day or week");
            }
            o->by = *parsed;
            return app::run_usage(*o);
          }};
}

}  // namespace gpuscope::cli
