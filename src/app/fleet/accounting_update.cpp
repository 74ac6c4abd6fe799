#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <set>

#include "app/fleet/fleet_read.hpp"
#include "app/fleet/fleet_run.hpp"
#include "app/job/job_server.hpp"
#include "core/error.hpp"
#include "store/accounting_db.hpp"
#include "util/local_time.hpp"
#include "util/visible_text.hpp"

namespace gpuscope::app {

namespace {

std::string local_time(std::int64_t ms) {
  return util::local_text(ms, "%Y-%m-%d %H:%M:%S");
}

// Where this update starts: a little before what the database covers (jobs that slurmdbd
// recorded late), or --from for the first one.
Period update_period(const JobsRun& o, store::AccountingDb& db, std::int64_t now) {
  Period p;
  const auto covered = db.covered_until_ms();
  if (o.fleet.from) {
    p.from_ms = period_of(o.fleet, now).from_ms;
  } else if (covered) {
    p.from_ms = *covered - static_cast<std::int64_t>(o.overlap_s * 1000);
  } else {
    throw Error::usage(fmt::format("{} covers no period yet", db.path().string()),
                       "the first update needs to know where to begin",
                       "give --from TIME (a date within the server's retention)");
  }
  const std::int64_t to = o.fleet.to ? period_of(o.fleet, now).to_ms : now;
  p.to_ms = std::min(to, now - static_cast<std::int64_t>(o.settle_s * 1000));
  return p;
}

// The jobs of `period` not in the database yet, by end.
std::vector<SiteJob> new_jobs(const JobsRun& o, store::AccountingDb& db, const Period& period,
                              std::int64_t now) {
  std::vector<SiteJob> jobs = ended_jobs(o.fleet, period, now);
  store::JobQuery known;
  known.from_ms = period.from_ms;
  known.to_ms = period.to_ms;
  std::set<std::string> in;
  for (const auto& job : db.jobs(known)) in.insert(job.id);
  std::erase_if(jobs, [&](const SiteJob& j) { return in.count(j.id) != 0; });
  std::sort(jobs.begin(), jobs.end(), [](const SiteJob& a, const SiteJob& b) {
    return a.end_ms != b.end_ms ? a.end_ms < b.end_ms : a.id < b.id;
  });
  return jobs;
}

}  // namespace

int update_accounting(const JobsRun& o) {
  const std::string path = accounting_path(o.fleet);
  store::AccountingDb db = store::AccountingDb::open_for_update(path);
  const std::int64_t now = fleet_now_ms();
  const Period period = update_period(o, db, now);
  if (period.to_ms <= period.from_ms) {
    fmt::print(stderr, "gpuscope: {} is up to date (it covers until {})\n", path,
               local_time(period.from_ms));
    return 0;
  }
  const std::unique_ptr<tsdb::Source> source = open_job_server(o.fleet.server, o.fleet.config);
  const double g_per_kwh = figure_options(o.fleet).g_per_kwh;
  const std::int64_t update = db.begin_update(period.from_ms, period.to_ms, source_name(*source));
  std::size_t added = 0, without = 0;
  std::int64_t covered = period.from_ms;
  try {
    std::vector<SiteJob> jobs = new_jobs(o, db, period, now);
    const std::size_t per = std::max<std::size_t>(1, o.batch);
    for (std::size_t at = 0; at < jobs.size(); at += per) {
      const std::size_t end = std::min(jobs.size(), at + per);
      std::vector<SiteJob> batch(std::make_move_iterator(jobs.begin() + static_cast<long>(at)),
                                 std::make_move_iterator(jobs.begin() + static_cast<long>(end)));
      summarise_jobs(o.fleet, *source, batch);
      // Every job that ends before the next batch's first is in once this batch is.
      const std::int64_t until = end < jobs.size() ? jobs[end].end_ms : period.to_ms;
      added += db.add_jobs(batch, until, update, g_per_kwh);
      without +=
          static_cast<std::size_t>(std::count_if(batch.begin(), batch.end(), [](const SiteJob& j) {
            return j.source == JobSource::None;
          }));
      covered = until;
    }
    db.add_jobs({}, period.to_ms, update, g_per_kwh);
    covered = period.to_ms;
  } catch (const Error& e) {
    db.finish_update(update, "failed", e.what());
    const std::string why = e.reason().empty() ? "" : e.reason() + "; ";
    throw Error(
        fmt::format("the update of {} stopped: {}", path, e.summary()),
        fmt::format("{}{} jobs were added before it stopped, the database covers until "
                    "{}, and no job is in it twice",
                    why, added, local_time(covered)),
        (e.hint().empty() ? "" : e.hint() + "; then ") + "run the update again: it resumes there");
  }
  db.finish_update(update, "done", {});
  fmt::print(stderr,
             "gpuscope: added {} jobs that ended {} to {} to {} ({} without figures); it covers "
             "until {}{}\n",
             added, local_time(period.from_ms), local_time(period.to_ms), path, without,
             local_time(covered),
             source->requests() ? fmt::format("; {} requests", *source->requests()) : "");
  return 0;
}

}  // namespace gpuscope::app
