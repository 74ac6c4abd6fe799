// `gpuscope job`: a past or running job analysed from the site's Prometheus or VictoriaMetrics,
// without having wrapped it (docs/jobs.md). The work is app::run_job.
#include <memory>

#include "app/job/job_run.hpp"
#include "cli/analysis_options.hpp"
#include "cli/command.hpp"
#include "cli/number_option.hpp"

namespace gpuscope::cli {

Command add_job_command(CLI::App& parent) {
  auto o = std::make_shared<app::JobRun>();
  CLI::App* app = parent.add_subcommand(
      "job",
      "Analyse a job gpuscope did not wrap, from the site's Prometheus or VictoriaMetrics: "
      "a SLURM job id, --pod NAMESPACE/NAME or --hosts with --from/--to");
  app->add_option("job", o->job_id, "The SLURM job id (its window and nodes come from sacct)")
      ->type_name("JOBID");
  app->add_option("--pod", o->pod,
                  "A Kubernetes pod instead, NAMESPACE/NAME (its window and node from "
                  "kube-state-metrics in the same server)")
      ->type_name("NS/NAME");
  app->add_option("--hosts", o->hosts, "Hosts instead of a job: every GPU on them, with --from")
      ->delimiter(',')
      ->type_name("HOST,...");
  app->add_option("--from", o->from,
                  "Start (Unix seconds, ISO 8601 with a zone, now); with a job: only from then")
      ->type_name("TIME");
  app->add_option("--to", o->to, "End (default: now); with a job: only until then")
      ->type_name("TIME");
  app->add_option("--prometheus", o->server,
                  "The server's URL (Prometheus, VictoriaMetrics, a vmselect path); default "
                  "GPUSCOPE_PROMETHEUS_URL or the site's configuration file (docs/jobs.md)")
      ->type_name("URL");
  app->add_option("--config", o->config,
                  "The site's configuration file (default: GPUSCOPE_CONFIG, "
                  "~/.config/gpuscope/prometheus.conf, /etc/gpuscope/prometheus.conf)")
      ->type_name("FILE");
  app->add_option("-o,--output", o->output,
                  "job.db keeps the job's data as a run database (the analysis is printed too); "
                  "report.html writes the HTML report")
      ->type_name("FILE");
  app->add_flag("-f,--force-overwrite,--force", o->force, "Overwrite an output file that exists");
  app->add_flag("--summary", o->monitoring.force_summary,
                "Let the server summarise each GPU per time bucket instead of pulling every "
                "sample (automatic for huge jobs)");
  app->add_option("--summary-dir", o->summary_dir,
                  "Where jobs' summaries are kept past the server's retention (default "
                  "GPUSCOPE_SUMMARY_DIR): read when the server no longer has the job")
      ->type_name("DIR");
  app->add_flag("--keep-summary", o->keep_summary,
                "Write the job's summary to the summary folder as JOBID.db and nothing else "
                "(for SLURM's EpilogSlurmctld)");
  app->add_flag("--row", o->row,
                "Print the job's row as `gpuscope jobs` gives it (the whole job, summarised by the "
                "server) instead of the analysis");
  app->add_flag("--csv", o->csv, "With --row: print it as CSV");
  add_number_option(*app, "--lookback-days", o->lookback_days, {0.01, 3650, "days"},
                    "How far back --pod is looked for (default 31)")
      ->type_name("DAYS");
  add_analysis_options(*app, o->analyze);
  app->add_flag("--json", o->analyze.json, "Print JSON (shape in docs/analysis.md)");
  app->add_flag("--no-color", o->analyze.no_color, "No colour even on a terminal");
  return {app, [o] { return app::run_job(*o); }};
}

}  // namespace gpuscope::cli
