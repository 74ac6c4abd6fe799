#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "app/fleet/fleet_read.hpp"
#include "app/fleet/fleet_run.hpp"
#include "app/job/job_server.hpp"
#include "core/error.hpp"
#include "fleet/usage.hpp"
#include "report/site_tables.hpp"
#include "store/accounting_db.hpp"

namespace gpuscope::app {

namespace {

// Most GPU-hours first; days and weeks in time order.
void order(std::vector<UsageRow>& rows, UsageBy by) {
  if (by == UsageBy::Day || by == UsageBy::Week) {
    std::sort(rows.begin(), rows.end(),
              [](const UsageRow& a, const UsageRow& b) { return a.group < b.group; });
    return;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const UsageRow& a, const UsageRow& b) {
    return a.gpu_hours != b.gpu_hours ? a.gpu_hours > b.gpu_hours : a.group < b.group;
  });
}

}  // namespace

int run_usage(UsageRun o) {
  if (o.fleet.json && o.fleet.csv) throw Error::usage("--json and --csv cannot be combined");
  const std::int64_t now = fleet_now_ms();
  const Period period = period_of(o.fleet, now);
  const std::string path = accounting_path(o.fleet);
  std::vector<UsageRow> rows;
  UsageRow total;
  std::string source;
  if (!path.empty() && !o.fleet.live) {
    store::AccountingDb db = store::AccountingDb::open_for_reading(path);
    store::JobQuery q;
    q.from_ms = period.from_ms;
    q.to_ms = period.to_ms;
    q.users = o.fleet.filter.users;
    q.accounts = o.fleet.filter.accounts;
    q.partitions = o.fleet.filter.partitions;
    q.states = o.fleet.filter.states;
    rows = db.usage(q, o.by);
    total = db.total(q);
    source = fmt::format("the accounting database {}", path);
  } else {
    const std::unique_ptr<tsdb::Source> server = open_job_server(o.fleet.server, o.fleet.config);
    std::vector<SiteJob> jobs = ended_jobs(o.fleet, period, now);
    summarise_jobs(o.fleet, *server, jobs);
    rows = fleet::group_usage(jobs, o.by);
    total = fleet::usage_total(jobs);
    source = source_name(*server);
  }
  order(rows, o.by);
  const std::string by(fleet::usage_by_word(o.by));
  const report::SiteTableContext context{period.from_ms, period.to_ms, source, total.jobs, by};
  if (o.fleet.json) {
    fmt::print("{}\n", report::dump_json(report::usage_json(rows, total, context)));
  } else if (o.fleet.csv) {
    fmt::print("{}", report::usage_csv(rows, by));
  } else {
    fmt::print("{}", report::usage_text(rows, total, context));
  }
  return 0;
}

}  // namespace gpuscope::app
