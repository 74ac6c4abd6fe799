#include "app/job/job_run.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <system_error>

#include "app/fleet/fleet_read.hpp"
#include "app/fleet/fleet_run.hpp"
#include "app/inputs/analyze_run.hpp"
#include "app/job/job_server.hpp"
#include "app/job/job_window.hpp"
#include "core/error.hpp"
#include "core/output_check.hpp"
#include "fleet/usage.hpp"
#include "report/site_tables.hpp"
#include "util/environment.hpp"
#include "util/output_file.hpp"
#include "util/temporary_folder.hpp"
#include "util/visible_text.hpp"

namespace gpuscope::app {

namespace fs = std::filesystem;

namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void check_choice(const JobRun& o) {
  const int given = (o.job_id.empty() ? 0 : 1) + (o.pod ? 1 : 0) + (o.hosts.empty() ? 0 : 1);
  if (given != 1) {
    throw Error::usage("say which job: a SLURM job id, --pod NAMESPACE/NAME, or --hosts",
                       given == 0 ? "none was given" : "more than one was given",
                       "gpuscope job 123456, gpuscope job --pod ns/name, or gpuscope job "
                       "--hosts a,b --from TIME --to TIME");
  }
  if (o.analyze.json && !o.output.empty() && fs::path(o.output).extension() == ".html") {
    throw Error::usage("--json prints the analysis; -o *.html writes the report",
                       "choose one of them");
  }
}

ingest::JobWindow find_job(const JobRun& o, tsdb::Source& source, std::int64_t now) {
  ingest::JobWindow job;
  if (!o.hosts.empty()) return hosts_window(o.hosts, o.from, o.to, now);
  if (o.pod) {
    job = pod_window(source, *o.pod, now, std::llround(o.lookback_days * 86'400'000));
  } else {
    job = slurm_job_window(sacct_program(o.sacct), o.job_id, now);
  }
  // --from/--to narrow a job's window (a part of a long job).
  if (o.from)
    job.window.start_ms = std::max(job.window.start_ms, time_option_ms("--from", *o.from, now));
  if (o.to) job.window.end_ms = std::min(job.window.end_ms, time_option_ms("--to", *o.to, now));
  if (job.window.end_ms <= job.window.start_ms) {
    throw Error::usage("--from and --to leave nothing of the job's window");
  }
  return job;
}

std::string job_title(const ingest::JobWindow& job) {
  if (job.kind == "slurm") {
    std::string title = "job " + job.id;
    if (job.name && !job.name->empty()) title += " (" + *job.name;
    if (job.user && !job.user->empty()) title += (job.name ? ", " : " (") + *job.user;
    if ((job.name && !job.name->empty()) || (job.user && !job.user->empty())) title += ")";
    return title;
  }
  if (job.kind == "pod") return "pod " + job.id;
  return fmt::format("hosts {}", fmt::join(job.nodes, ","));
}

// job_title as it may be printed: a job's name and user come from sacct, a pod's from the server.
std::string shown_title(const ingest::JobWindow& job) {
  return util::visible(job_title(job));
}

void say_what_was_read(const ingest::JobWindow& job, const ingest::MonitoringResult& r,
                       const tsdb::ServerInfo& server, std::optional<std::size_t> requests) {
  // Node names, the family and the labels matched come from the server or sacct: shown, never
  // acted on by the terminal.
  const std::string cost =
      requests ? fmt::format("; {} request{}", *requests, *requests == 1 ? "" : "s") : "";
  fmt::print(stderr, "gpuscope: {}: {} GPU{} on {} from {} ({}; {}), {} {:g} s{}{}\n",
             shown_title(job), r.gpus, r.gpus == 1 ? "" : "s",
             util::visible(fmt::format("{}", fmt::join(job.nodes, ","))), util::visible(server.url),
             util::visible(r.family), util::visible(r.matched_by),
             r.summarised ? "summarised per" : "samples every", r.resolution_s,
             job.running ? "; still running" : "", cost);
  for (const auto& note : r.notes) fmt::print(stderr, "gpuscope: note: {}\n", util::visible(note));
}

// The folder of kept summaries, or nullopt when none is set.
std::optional<fs::path> summary_dir(const JobRun& o) {
  if (o.summary_dir) return fs::path(*o.summary_dir);
  const std::string env = util::environment_or_empty("GPUSCOPE_SUMMARY_DIR");
  if (!env.empty()) return fs::path(env);
  return std::nullopt;
}

// Reads the job from the server into `database`; says what was read.
void read_into(const JobRun& o, tsdb::Source& source, const ingest::JobWindow& job,
               const fs::path& database, bool overwrite) {
  ingest::RunTarget target(database, overwrite);
  const ingest::MonitoringResult read = ingest::read_job(source, job, o.monitoring, target);
  const ingest::ImportSummary summary = target.finish();
  for (const auto& note : summary.notes) {
    fmt::print(stderr, "gpuscope: note: {}\n", util::visible(note));
  }
  say_what_was_read(job, read, source.server(), source.requests());
  for (const auto& warning : source.warnings()) {
    fmt::print(stderr, "gpuscope: warning: the server said: {}\n", util::visible(warning));
  }
}

}  // namespace

Error job_read_error(const Error& e, tsdb::Source& source, const ingest::JobWindow& job,
                     std::int64_t now) {
  // Only "nothing of the job" is the retention's doing; a refusal, a network failure or an
  // answer of another shape is said as it is.
  if (dynamic_cast<const ingest::NoJobSeries*>(&e) == nullptr) return e;
  const auto retention = source.server().retention_s;
  if (!retention || job.window.end_ms >= now - std::llround(*retention * 1000)) return e;
  return Error(
      fmt::format("{} ended {:.0f} days ago, and the server keeps {:.0f} days", shown_title(job),
                  static_cast<double>(now - job.window.end_ms) / 86'400'000, *retention / 86'400),
      e.what(),
      "its series are gone; keep summaries at each job's end for later (--keep-summary in "
      "SLURM's EpilogSlurmctld, docs/jobs.md), or ask the site for a longer retention");
}

namespace {

// The summary kept at the job's end, when there is one: <dir>/<id>.db.
std::optional<fs::path> kept_summary(const JobRun& o, const ingest::JobWindow& job) {
  const auto dir = summary_dir(o);
  if (!dir || job.kind != "slurm") return std::nullopt;
  const fs::path kept = *dir / (job.id + ".db");
  if (!fs::is_regular_file(kept)) return std::nullopt;
  return kept;
}

}  // namespace

fs::path keep_job_summary(JobRun o, tsdb::Source& source, const ingest::JobWindow& job) {
  const auto dir = summary_dir(o);
  if (!dir || job.id.empty() || job.id.find('/') != std::string::npos || job.id == "." ||
      job.id == "..") {
    throw Error::usage(
        "--keep-summary needs a SLURM job and --summary-dir (or GPUSCOPE_SUMMARY_DIR)");
  }
  const fs::path kept = *dir / (job.id + ".db");
  // The epilog runs as the SlurmUser in a folder others may write: whatever is at `kept` (a
  // planted link above all) is replaced by a rename, never opened or followed. The summary is
  // written in a private folder beside it (mkdtemp, 0700) and renamed over the name.
  std::error_code error;
  fs::create_directories(*dir, error);
  if (error) throw_write_error(kept, error);
  const auto there = fs::symlink_status(kept, error);
  if (fs::exists(there) && !fs::is_regular_file(there) && !fs::is_symlink(there)) {
    throw Error::usage(fmt::format("{} is not a regular file", kept.string()),
                       "gpuscope only ever replaces regular files (or a link itself)",
                       "remove it, or choose another --summary-dir");
  }
  std::unique_ptr<util::TemporaryFolder> scratch;
  try {
    scratch = std::make_unique<util::TemporaryFolder>(".gpuscope-keep-", *dir);
  } catch (const std::system_error& e) {
    throw_write_error(kept, e.code());
  }
  const fs::path written = scratch->path() / "job.db";
  o.monitoring.force_summary = true;
  read_into(o, source, job, written, true);
  for (const char* companion : {"-wal", "-shm", "-journal"}) {
    fs::remove(kept.string() + companion, error);  // a link is removed, not its target
  }
  if (const auto failed = util::commit_written_file(written, kept)) throw_write_error(kept, failed);
  return kept;
}

namespace {

// --row: the job's row of `gpuscope jobs`, from the same queries and figures.
int print_row(const JobRun& o, tsdb::Source& source) {
  if (o.job_id.empty()) throw Error::usage("--row is for a SLURM job id");
  FleetOptions fleet;
  fleet.sacct = o.sacct;
  fleet.summary_dir = o.summary_dir;
  fleet.carbon_intensity = o.analyze.carbon_intensity;
  fleet.region = o.analyze.region;
  fleet.pue = o.analyze.pue;
  const SiteJob row = site_row_of_job(fleet, source, o.job_id);
  if (o.analyze.json) {
    fmt::print("{}\n", report::dump_json(report::site_job_json(row)));
  } else if (o.csv) {
    fmt::print("{}", report::jobs_csv(std::vector<SiteJob>{row}));
  } else {
    const std::vector<SiteJob> rows{row};
    report::SiteTableContext context{row.start_ms, row.end_ms, source_name(source), 1, {}};
    fmt::print("{}", report::jobs_text(rows, fleet::usage_total(rows), context));
  }
  return 0;
}

}  // namespace

int run_job(JobRun o) {
  check_choice(o);
  const std::int64_t now = now_ms();
  const std::unique_ptr<tsdb::Source> source = open_job_server(o.server, o.config);
  if (o.row) return print_row(o, *source);
  const ingest::JobWindow job = find_job(o, *source, now);
  if (o.keep_summary) {
    const fs::path kept = keep_job_summary(o, *source, job);
    fmt::print(stderr, "gpuscope: kept the summary of {} in {}\n", shown_title(job), kept.string());
    return 0;
  }

  const bool keep = !o.output.empty() && fs::path(o.output).extension() == ".db";
  const bool html = !o.output.empty() && !keep;
  std::unique_ptr<util::TemporaryFolder> scratch;
  fs::path database;
  if (keep) {
    OutputCheck check;
    check.force = o.force;
    database = check_output_file(o.output, check);
  } else {
    scratch = std::make_unique<util::TemporaryFolder>("gpuscope-job-");
    database = scratch->path() / "job.db";
  }
  try {
    read_into(o, *source, job, database, keep ? o.force : true);
    if (keep) fmt::print(stderr, "gpuscope: kept the job's data in {}\n", database.string());
  } catch (const Error& e) {
    // Gone from the server (its retention), or never there: the summary kept at the job's end.
    const auto kept = kept_summary(o, job);
    if (!kept) throw job_read_error(e, *source, job, now);
    fmt::print(stderr,
               "gpuscope: the monitoring database could not give {} ({}); this is the summary "
               "kept at its end, {}\n",
               shown_title(job), util::visible(e.what()), kept->string());
    if (keep) {
      fs::copy_file(*kept, database, fs::copy_options::overwrite_existing);
    } else {
      database = *kept;
    }
  }

  o.analyze.inputs = {database.string()};
  if (html) {
    ReportRun report;
    report.analyze = o.analyze;
    report.output = o.output;
    report.plots.force = o.force;
    return run_report(report);
  }
  AnalyzeRun analyze;
  analyze.analyze = o.analyze;
  return run_analyze(analyze);
}

}  // namespace gpuscope::app
