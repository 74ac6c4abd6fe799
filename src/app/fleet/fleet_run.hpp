// `gpuscope jobs` and `gpuscope usage`, start to end (docs/fleet.md): the site's GPU jobs of a
// period from the accounting database, or from SLURM's accounting and the monitoring server
// (each job's GPUs summarised by the server, many jobs per query); `jobs --update` adds the jobs
// that ended since the last update to the database; `-o site.html` writes the site report.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/site_job.hpp"
#include "fleet/gpu_aggregates.hpp"
#include "fleet/job_figures.hpp"
#include "fleet/sacct_jobs.hpp"
#include "tsdb/source.hpp"

namespace gpuscope::app {

// What `jobs` and `usage` share: which jobs, from where, and how CO2 is counted.
struct FleetOptions {
  std::optional<std::string> from;         // --from TIME (default: 7 days before --to)
  std::optional<std::string> to;           // --to TIME (default: now)
  fleet::JobFilter filter;                 // --user, --account, --partition, --state
  std::optional<std::string> db;           // --db FILE, else GPUSCOPE_ACCOUNTING_DB
  bool live = false;                       // --live: the server even when a database is set
  std::optional<std::string> server;       // --prometheus URL
  std::optional<std::string> config;       // --config FILE
  std::optional<std::string> summary_dir;  // kept summaries (--summary-dir, GPUSCOPE_SUMMARY_DIR)
  std::string sacct = "sacct";
  double sacct_timeout_s = 600;            // --sacct-timeout: how long sacct may take
  std::optional<double> carbon_intensity;  // --carbon-intensity G/kWh
  std::optional<std::string> region;       // --region CODE
  double pue = 1;
  fleet::AggregateOptions aggregates;
  fleet::FigureOptions figures;  // its intensity and PUE are filled from the above
  bool json = false;
  bool csv = false;
};

struct JobsRun {
  FleetOptions fleet;
  std::string output;  // -o site.html
  bool force = false;
  std::optional<std::size_t> limit;  // rows printed (text default 50; JSON and CSV all)
  bool update = false;               // --update: add the jobs that ended since the last update
  double settle_s = 120;     // --settle: jobs that ended this recently wait for the next update
  double overlap_s = 3600;   // an update asks again this long before what is covered
  std::size_t batch = 1000;  // jobs per batch written (and asked of the server) in an update
};

struct UsageRun {
  FleetOptions fleet;
  UsageBy by = UsageBy::User;
};

int run_jobs(JobsRun o);
int run_usage(UsageRun o);

// The site's row of one SLURM job, as `gpuscope jobs` computes it (`gpuscope job ID --row`).
SiteJob site_row_of_job(const FleetOptions& o, tsdb::Source& source, const std::string& job_id);

}  // namespace gpuscope::app
