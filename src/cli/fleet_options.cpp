#include "cli/fleet_options.hpp"

#include "cli/number_option.hpp"

namespace gpuscope::cli {

void add_fleet_options(CLI::App& app, app::FleetOptions& o) {
  app.add_option("--from", o.from,
                 "The jobs that ended from then (Unix seconds, ISO 8601 with a zone, now); "
                 "default: 7 days before --to")
      ->type_name("TIME");
  app.add_option("--to", o.to, "... until then (default: now)")->type_name("TIME");
  app.add_option("--user", o.filter.users, "Only these users' jobs")
      ->delimiter(',')
      ->type_name("USER,...");
  app.add_option("--account", o.filter.accounts, "Only these accounts' jobs")
      ->delimiter(',')
      ->type_name("ACCOUNT,...");
  app.add_option("--partition", o.filter.partitions, "Only these partitions' jobs")
      ->delimiter(',')
      ->type_name("PARTITION,...");
  app.add_option("--state", o.filter.states,
                 "Only jobs that ended in these states (COMPLETED, FAILED, TIMEOUT, ...)")
      ->delimiter(',')
      ->type_name("STATE,...");
  app.add_option("--db", o.db,
                 "The accounting database (default GPUSCOPE_ACCOUNTING_DB); without one, the "
                 "jobs come from sacct and the monitoring server")
      ->type_name("FILE");
  app.add_flag("--live", o.live, "Ask sacct and the server even when a database is set");
  app.add_option("--prometheus", o.server,
                 "The monitoring server's URL (default GPUSCOPE_PROMETHEUS_URL or the site's "
                 "configuration file, docs/jobs.md)")
      ->type_name("URL");
  app.add_option("--config", o.config, "The site's configuration file (docs/jobs.md)")
      ->type_name("FILE");
  app.add_option("--summary-dir", o.summary_dir,
                 "Where `job --keep-summary` kept jobs' summaries (default GPUSCOPE_SUMMARY_DIR): "
                 "read for jobs the server no longer has")
      ->type_name("DIR");
  add_number_option(app, "--carbon-intensity", o.carbon_intensity, kCarbonIntensity,
                    "The grid's intensity in gCO2e/kWh (default: --region's yearly average)")
      ->type_name("G");
  app.add_option("--region", o.region,
                 "The grid region whose yearly average is counted (default WORLD, 475 g/kWh)")
      ->type_name("CODE");
  add_number_option(app, "--sacct-timeout", o.sacct_timeout_s, NumberRange(1, 86'400, "s").whole(),
                    "How long sacct may take before gpuscope gives up (default 600; slurmdbd "
                    "answers a busy site's months slowly)")
      ->type_name("SECONDS");
  add_number_option(app, "--pue", o.pue, {1, 10, ""}, "The facility's PUE (default 1)")
      ->type_name("PUE");
  add_number_option(app, "--idle-threshold", o.aggregates.idle_util_pct, {0, 100, "%"},
                    "A sample at or below this GPU utilization is idle (default 1)")
      ->type_name("PCT");
  app.add_flag("--json", o.json, "Print JSON (shape in docs/fleet.md)");
  app.add_flag("--csv", o.csv, "Print CSV");
}

}  // namespace gpuscope::cli
