#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "app/fleet/fleet_read.hpp"
#include "app/fleet/fleet_run.hpp"
#include "app/fleet/site_data.hpp"
#include "app/job/job_server.hpp"
#include "app/job/job_window.hpp"
#include "core/error.hpp"
#include "core/output_check.hpp"
#include "fleet/usage.hpp"
#include "report/site_tables.hpp"
#include "store/accounting_db.hpp"
#include "util/output_file.hpp"

namespace gpuscope::app {

namespace {

constexpr std::size_t kTextRows = 50;

void check_options(const JobsRun& o) {
  if (o.fleet.json && o.fleet.csv) throw Error::usage("--json and --csv cannot be combined");
  if (!o.output.empty() && (o.fleet.json || o.fleet.csv)) {
    throw Error::usage("-o writes the site report; --json and --csv print the rows",
                       "choose one of them");
  }
  if (o.update && accounting_path(o.fleet).empty()) {
    throw Error::usage("--update needs the accounting database", {},
                       "give --db FILE (or set GPUSCOPE_ACCOUNTING_DB)");
  }
}

store::JobQuery job_query(const FleetOptions& o, const Period& p) {
  store::JobQuery q;
  q.from_ms = p.from_ms;
  q.to_ms = p.to_ms;
  q.users = o.filter.users;
  q.accounts = o.filter.accounts;
  q.partitions = o.filter.partitions;
  q.states = o.filter.states;
  return q;
}

// The order of the rows: the most idle GPU-hours first, jobs without figures last, then the
// latest first (the accounting database's ORDER BY).
void sort_rows(std::vector<SiteJob>& jobs) {
  std::stable_sort(jobs.begin(), jobs.end(), [](const SiteJob& a, const SiteJob& b) {
    if (a.idle_gpu_hours.has_value() != b.idle_gpu_hours.has_value()) {
      return a.idle_gpu_hours.has_value();
    }
    if (a.idle_gpu_hours && *a.idle_gpu_hours != *b.idle_gpu_hours) {
      return *a.idle_gpu_hours > *b.idle_gpu_hours;
    }
    return a.end_ms > b.end_ms;
  });
}

void print_rows(const JobsRun& o, const std::vector<SiteJob>& jobs, const UsageRow& total,
                const report::SiteTableContext& context) {
  if (o.fleet.json) {
    fmt::print("{}\n", report::dump_json(report::jobs_json(jobs, total, context)));
  } else if (o.fleet.csv) {
    fmt::print("{}", report::jobs_csv(jobs));
  } else {
    fmt::print("{}", report::jobs_text(jobs, total, context));
  }
}

std::size_t row_limit(const JobsRun& o) {
  if (o.limit) return *o.limit;
  return o.fleet.json || o.fleet.csv || !o.output.empty() ? 0 : kTextRows;
}

int jobs_from_database(const JobsRun& o, const std::string& path, const Period& period) {
  store::AccountingDb db = store::AccountingDb::open_for_reading(path);
  store::JobQuery query = job_query(o.fleet, period);
  const std::string source = fmt::format("the accounting database {}", path);
  if (!o.output.empty()) return write_site_report(o, db, query, source);
  report::SiteTableContext context{period.from_ms, period.to_ms, source, db.count_jobs(query), {}};
  const UsageRow total = db.total(query);
  query.limit = row_limit(o);
  query.gpu_rows = o.fleet.json;
  print_rows(o, db.jobs(query), total, context);
  return 0;
}

int jobs_from_server(const JobsRun& o, const Period& period, std::int64_t now) {
  const std::unique_ptr<tsdb::Source> source = open_job_server(o.fleet.server, o.fleet.config);
  std::vector<SiteJob> jobs = ended_jobs(o.fleet, period, now);
  summarise_jobs(o.fleet, *source, jobs);
  sort_rows(jobs);
  const std::string name = source_name(*source);
  if (const auto requests = source->requests()) {
    fmt::print(stderr, "gpuscope: {} GPU jobs from sacct and {}; {} requests\n", jobs.size(), name,
               *requests);
  }
  if (!o.output.empty()) return write_site_report(o, jobs, period, name);
  const UsageRow total = fleet::usage_total(jobs);
  report::SiteTableContext context{
      period.from_ms, period.to_ms, name, static_cast<std::int64_t>(jobs.size()), {}};
  const std::size_t limit = row_limit(o);
  if (limit > 0 && jobs.size() > limit) jobs.resize(limit);
  print_rows(o, jobs, total, context);
  return 0;
}

}  // namespace

int run_jobs(JobsRun o) {
  check_options(o);
  if (o.update) return update_accounting(o);
  const std::int64_t now = fleet_now_ms();
  const Period period = period_of(o.fleet, now);
  const std::string path = accounting_path(o.fleet);
  if (!path.empty() && !o.fleet.live) return jobs_from_database(o, path, period);
  return jobs_from_server(o, period, now);
}

SiteJob site_row_of_job(const FleetOptions& o, tsdb::Source& source, const std::string& job_id) {
  const std::int64_t now = fleet_now_ms();
  const std::string output =
      run_sacct(sacct_program(o.sacct), fleet::sacct_one_job_arguments(job_id));
  fleet::SacctRead read = fleet::read_sacct_jobs(output, now);
  std::vector<SiteJob> jobs;
  for (auto& job : read.jobs) {
    if (job.id == job_id) jobs.push_back(std::move(job));
  }
  if (jobs.empty()) {
    throw Error(
        fmt::format("SLURM's accounting has no GPU job {}", job_id),
        read.without_gpus > 0 ? "it had no GPU allocated" : "sacct printed no allocation for it",
        "gpuscope jobs lists the jobs that had GPUs");
  }
  summarise_jobs(o, source, jobs);
  return jobs.front();
}

}  // namespace gpuscope::app
