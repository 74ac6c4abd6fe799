// `gpuscope job`, start to end: the job's window and nodes (SLURM's accounting, a pod's
// kube-state-metrics series, or given), its GPUs' series from the site's Prometheus or
// VictoriaMetrics read into a run database through the ingest layer, then analysed as analyze
// does, written as the HTML report, or kept (docs/jobs.md).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ingest/monitoring/monitoring.hpp"
#include "load/loader.hpp"

namespace gpuscope::app {

struct JobRun {
  std::string job_id;                 // a SLURM job id
  std::optional<std::string> pod;     // --pod NAMESPACE/NAME
  std::vector<std::string> hosts;     // --hosts a,b
  std::optional<std::string> from;    // --from TIME (with --hosts, or to narrow a job)
  std::optional<std::string> to;      // --to TIME
  std::optional<std::string> server;  // --prometheus URL (else the site's configuration)
  std::optional<std::string> config;  // --config FILE (the site's configuration file)
  std::string output;                 // -o: job.db keeps the data, *.html the report
  bool force = false;
  ingest::MonitoringOptions monitoring;
  double lookback_days = 31;    // how far back a pod is searched for
  std::string sacct = "sacct";  // GPUSCOPE_SACCT for tests and odd installs
  // Where jobs' summaries are kept past the server's retention (--summary-dir, else
  // GPUSCOPE_SUMMARY_DIR): <dir>/<job id>.db, read when the server no longer has the job.
  std::optional<std::string> summary_dir;
  bool keep_summary = false;  // --keep-summary: write the job's summary there, print nothing else
  // --row: the job's row as `gpuscope jobs` gives it (the server's summaries of the whole job)
  // instead of the analysis; --json and --csv apply.
  bool row = false;
  bool csv = false;
  load::AnalyzeOptions analyze;  // inputs are filled by the workflow
};

// Runs it; returns the exit code. Throws Error (usage for bad options).
int run_job(JobRun o);

// --keep-summary (a SLURM EpilogSlurmctld, as jobstats' is): `job`'s GPUs summarised by `source`
// into <summary dir>/<job id>.db, which outlives the server's retention; returns that path.
// Whatever is at that name is replaced, a symbolic link itself and never the file it points to.
// Throws Error (usage without a SLURM job or a summary folder).
std::filesystem::path keep_job_summary(JobRun o, tsdb::Source& source,
                                       const ingest::JobWindow& job);

// What `job`'s read failing with `e` says: a job that ended before what the server still keeps
// and of which nothing was found (ingest::NoJobSeries) is said to be gone with the retention;
// any other failure (the server refused a query, no answer) is `e` itself.
Error job_read_error(const Error& e, tsdb::Source& source, const ingest::JobWindow& job,
                     std::int64_t now);

}  // namespace gpuscope::app
