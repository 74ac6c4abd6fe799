// What the fleet room's commands share (app/fleet/): the period asked for, the jobs of it from
// sacct, each job's figures from the monitoring server (or the summary kept at its end), the
// grid intensity the CO2 is counted at.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "app/fleet/fleet_run.hpp"
#include "tsdb/source.hpp"

namespace gpuscope::app {

// The jobs that ended in [from_ms, to_ms).
struct Period {
  std::int64_t from_ms = 0;
  std::int64_t to_ms = 0;
};

std::int64_t fleet_now_ms();

// --from and --to (default: the 7 days up to now). Throws Error::usage for a bad time.
Period period_of(const FleetOptions& o, std::int64_t now_ms);

// The grid intensity (--carbon-intensity, else --region's yearly average, else the world's) and
// PUE into the figure options. Throws Error::usage for an unknown region or a PUE below 1.
fleet::FigureOptions figure_options(const FleetOptions& o);

// The GPU jobs sacct knows that ended in `period` (running ones left out), as SiteJobs without
// figures. Says on stderr what sacct printed that could not be read.
std::vector<SiteJob> ended_jobs(const FleetOptions& o, const Period& period, std::int64_t now_ms);

// Fills the figures of `jobs` from `source` (many jobs per query), else from the summary kept at
// each job's end, else leaves them absent with a note. Throws Error when the server fails.
void summarise_jobs(const FleetOptions& o, tsdb::Source& source, std::vector<SiteJob>& jobs);

// The accounting database's path: --db, else GPUSCOPE_ACCOUNTING_DB; "" when neither is set.
std::string accounting_path(const FleetOptions& o);

// `jobs --update` (app/fleet/accounting_update.cpp).
int update_accounting(const JobsRun& o);

// "<who> at <url>" of a source, for tables and messages.
std::string source_name(tsdb::Source& source);

}  // namespace gpuscope::app
