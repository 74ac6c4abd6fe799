#include "app/fleet/fleet_read.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>

#include "analyze/carbon.hpp"
#include "app/job/job_window.hpp"
#include "core/error.hpp"
#include "load/loader.hpp"
#include "util/environment.hpp"
#include "util/visible_text.hpp"

namespace gpuscope::app {

namespace fs = std::filesystem;

namespace {

constexpr std::int64_t kWeekMs = 7 * 86'400'000LL;
const char* const kSacctHint =
    "gpuscope jobs reads SLURM's accounting with sacct: run it where sacct works (a login node "
    "or the controller), or set GPUSCOPE_SACCT to its path (with -M CLUSTER in a wrapper for "
    "another cluster)";

std::optional<fs::path> summary_dir(const FleetOptions& o) {
  if (o.summary_dir) return fs::path(*o.summary_dir);
  const std::string env = util::environment_or_empty("GPUSCOPE_SUMMARY_DIR");
  if (!env.empty()) return fs::path(env);
  return std::nullopt;
}

std::optional<double> summary_mean(const analyze::GpuReport& g, Metric m) {
  const auto& s = g.over_time[static_cast<std::size_t>(m)];
  return s ? std::optional<double>(s->mean) : std::nullopt;
}

// A job's GPUs from the summary kept at its end (<dir>/<id>.db), the whole window untrimmed.
std::vector<fleet::GpuAggregate> kept_aggregates(const fs::path& kept) {
  load::AnalyzeOptions a;
  a.inputs = {kept.string()};
  a.trim = "none";
  const analyze::Analysis analysis = load::load_analysis(a);
  std::vector<fleet::GpuAggregate> out;
  for (const auto& g : analysis.gpus) {
    fleet::GpuAggregate a2;
    a2.key =
        g.key.uuid.empty() ? fmt::format("{}/gpu{}", g.key.host, g.key.device_index) : g.key.uuid;
    a2.node = g.key.host;
    a2.index = g.key.device_index;
    a2.model = g.key.name;
    a2.family = "kept summary";
    a2.samples = static_cast<double>(g.samples);
    a2.util_pct = summary_mean(g, Metric::GpuUtilPct);
    a2.sm_active_pct = summary_mean(g, Metric::SmActivePct);
    a2.occupancy_pct = summary_mean(g, Metric::SmOccupancyPct);
    a2.flop_pct = summary_mean(g, Metric::FlopActivePct);
    const auto& memory = g.over_time[static_cast<std::size_t>(Metric::MemoryUsedBytes)];
    if (memory) a2.memory_peak_bytes = memory->max;
    a2.memory_used_mean_bytes = summary_mean(g, Metric::MemoryUsedBytes);
    a2.memory_free_mean_bytes = summary_mean(g, Metric::MemoryFreeBytes);
    a2.energy_rise_j = g.energy.counter_j;
    a2.power_mean_w = g.energy.average_power_w;
    out.push_back(std::move(a2));
  }
  return out;
}

// The GPU jobs sacct knows that ran during `period`, as rows without figures.
std::vector<SiteJob> sacct_jobs(const FleetOptions& o, const Period& period, std::int64_t now_ms) {
  const std::string output = run_sacct(
      sacct_program(o.sacct), fleet::sacct_jobs_arguments({period.from_ms, period.to_ms}, o.filter),
      std::chrono::seconds(static_cast<long>(o.sacct_timeout_s)), kSacctHint);
  fleet::SacctRead read = fleet::read_sacct_jobs(output, now_ms);
  if (read.unreadable_count > 0) {
    fmt::print(stderr,
               "gpuscope: warning: {} line{} sacct printed could not be read and {} left out: {}\n",
               read.unreadable_count, read.unreadable_count == 1 ? "" : "s",
               read.unreadable_count == 1 ? "is" : "are",
               util::visible(fmt::format("{}", fmt::join(read.unreadable, "; "))));
  }
  return std::move(read.jobs);
}

// `o` without its filters: every user's jobs, which share nodes whoever ran them.
FleetOptions everyone_of(const FleetOptions& o) {
  FleetOptions all = o;
  all.filter = {};
  return all;
}

// Marks the jobs of `jobs` whose nodes ran no other GPU job of `all` during them.
void mark_nodes_alone(std::vector<SiteJob>& jobs, const std::vector<SiteJob>& all) {
  std::map<std::string, std::vector<const SiteJob*>> by_node;
  for (const auto& job : all) {
    for (const auto& node : job.nodes) by_node[node].push_back(&job);
  }
  for (auto& job : jobs) {
    job.nodes_alone = true;
    for (const auto& node : job.nodes) {
      for (const SiteJob* other : by_node[node]) {
        if (other->id == job.id) continue;
        if (other->start_ms <= job.end_ms && other->end_ms >= job.start_ms) job.nodes_alone = false;
      }
    }
  }
}

}  // namespace

std::int64_t fleet_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Period period_of(const FleetOptions& o, std::int64_t now_ms) {
  Period p;
  p.to_ms = o.to ? time_option_ms("--to", *o.to, now_ms) : now_ms;
  p.from_ms = o.from ? time_option_ms("--from", *o.from, now_ms) : p.to_ms - kWeekMs;
  if (p.to_ms <= p.from_ms) {
    throw Error::usage("--to is not after --from", {}, "give a period that ends after it begins");
  }
  return p;
}

fleet::FigureOptions figure_options(const FleetOptions& o) {
  fleet::FigureOptions f = o.figures;
  if (o.carbon_intensity) {
    if (!(*o.carbon_intensity >= 0)) throw Error::usage("--carbon-intensity must be 0 or more");
    f.g_per_kwh = *o.carbon_intensity;
  } else {
    const auto region = analyze::find_region(o.region.value_or("WORLD"));
    if (!region) {
      throw Error::usage(fmt::format("unknown --region '{}'", *o.region), {},
                         "give a country code (FR, DE, US...) or --carbon-intensity G");
    }
    f.g_per_kwh = region->g_per_kwh;
  }
  if (!(o.pue >= 1)) throw Error::usage("--pue must be 1 or more");
  f.pue = o.pue;
  return f;
}

std::vector<SiteJob> ended_jobs(const FleetOptions& o, const Period& period, std::int64_t now_ms) {
  std::vector<SiteJob> all = sacct_jobs(o, period, now_ms);
  std::vector<SiteJob> out;
  std::int64_t earliest = period.from_ms;
  for (auto& job : all) {
    if (job.running || job.end_ms < period.from_ms || job.end_ms >= period.to_ms) continue;
    earliest = std::min(earliest, job.start_ms);
    out.push_back(job);
  }
  // Whose nodes were theirs alone: against every user's jobs since the earliest began.
  const bool filtered = !o.filter.users.empty() || !o.filter.accounts.empty() ||
                        !o.filter.partitions.empty() || !o.filter.states.empty();
  if (!out.empty() && (filtered || earliest < period.from_ms)) {
    all = sacct_jobs(everyone_of(o), {earliest, period.to_ms}, now_ms);
  }
  mark_nodes_alone(out, all);
  return out;
}

void summarise_jobs(const FleetOptions& o, tsdb::Source& source, std::vector<SiteJob>& jobs) {
  const fleet::FigureOptions figures = figure_options(o);
  std::vector<fleet::AggregateJob> asked;
  for (const auto& job : jobs) {
    asked.push_back({job.id, job.start_ms, job.end_ms, job.nodes, job.nodes_alone});
  }
  fleet::AggregateRead read = fleet::read_gpu_aggregates(source, asked, o.aggregates);
  const auto dir = summary_dir(o);
  for (auto& job : jobs) {
    auto found = read.by_job.find(job.id);
    if (found != read.by_job.end()) {
      fleet::fill_figures(job, std::move(found->second), figures);
      const auto notes = read.notes.find(job.id);
      if (notes != read.notes.end()) {
        job.notes.insert(job.notes.end(), notes->second.begin(), notes->second.end());
      }
      continue;
    }
    const fs::path kept = dir ? *dir / (job.id + ".db") : fs::path();
    if (dir && fs::is_regular_file(kept)) {
      fleet::fill_figures(job, kept_aggregates(kept), figures);
      job.source = JobSource::KeptSummary;
      job.notes.push_back(fmt::format("from the summary kept at its end, {}", kept.string()));
      continue;
    }
    job.source = JobSource::None;
    job.notes.push_back(
        "the server has no series labelled with it (gone with the retention, or its exporter "
        "does not label jobs) and no summary was kept");
  }
}

std::string accounting_path(const FleetOptions& o) {
  if (o.db) return *o.db;
  return util::environment_or_empty("GPUSCOPE_ACCOUNTING_DB");
}

std::string source_name(tsdb::Source& source) {
  const tsdb::ServerInfo info = source.server();
  const char* kind = info.kind == tsdb::ServerKind::Prometheus        ? "Prometheus"
                     : info.kind == tsdb::ServerKind::VictoriaMetrics ? "VictoriaMetrics"
                                                                      : "the server";
  return fmt::format("{} at {}", kind, info.url);
}

}  // namespace gpuscope::app
