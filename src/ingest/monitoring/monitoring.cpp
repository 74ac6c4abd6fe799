// read_job: the job's series found (job_series), fetched raw or summarised per time bucket,
// turned into rows (job_timeline) and written as one run per node.
#include "ingest/monitoring/monitoring.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <unordered_map>

#include "core/error.hpp"
#include "core/version.hpp"
#include "ingest/monitoring/job_runs.hpp"
#include "ingest/monitoring/job_series.hpp"
#include "ingest/monitoring/job_timeline.hpp"

namespace gpuscope::ingest {
namespace {

constexpr std::int64_t kProbeMs = 3'600'000;  // the first hour tells the scrape interval

std::string join(const std::vector<std::string>& parts, std::string_view sep = ",") {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : std::string(sep)) + p;
  return out;
}

std::string_view server_name(const tsdb::ServerInfo& server) {
  switch (server.kind) {
    case tsdb::ServerKind::Prometheus:
      return "Prometheus";
    case tsdb::ServerKind::VictoriaMetrics:
      return "VictoriaMetrics";
    case tsdb::ServerKind::Other:
      break;
  }
  return "the monitoring server";
}

void check_window(const JobWindow& job, const MonitoringOptions& options) {
  const auto& w = job.window;
  if (!tsdb::ns_of_ms(w.start_ms) || !tsdb::ns_of_ms(w.end_ms)) {
    throw Error::usage(fmt::format("job {}'s window ({} to {} ms) lies past what gpuscope's "
                                   "nanosecond times hold (1678 to 2262)",
                                   job.id, w.start_ms, w.end_ms),
                       {}, "check the job's start and end times");
  }
  if (w.end_ms <= w.start_ms) {
    throw Error::usage(fmt::format("job {}'s window ends before it starts ({} to {})", job.id,
                                   utc_text(w.start_ms), utc_text(w.end_ms)),
                       {}, "check the job's start and end times");
  }
  const double days = static_cast<double>(w.length_ms()) / 86'400'000.0;
  if (days > options.max_window_days) {
    throw Error::usage(
        fmt::format("job {}'s window is {:.0f} days long, more than the {:.0f} days gpuscope "
                    "reads from a monitoring database",
                    job.id, days, options.max_window_days),
        {}, "check the job's start and end times, or give a narrower window");
  }
}

void say_retention(const tsdb::ServerInfo& server, const JobWindow& job, Notes& notes) {
  if (!server.retention_s) return;
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const auto kept_from = now_ms - static_cast<std::int64_t>(*server.retention_s * 1e3);
  if (job.window.start_ms < kept_from) {
    notes.once(
        "retention", "",
        fmt::format("{} keeps {} of samples: what the job did before {} is gone",
                    server_name(server), duration_text(*server.retention_s), utc_text(kept_from)));
  }
}

[[noreturn]] void no_gpus(const JobWindow& job, const JobSeries& js) {
  std::vector<std::string> asked;
  for (const auto& q : js.queries) asked.push_back(q.how);
  if (asked.empty()) asked.push_back("series of the given hosts");
  throw NoJobSeries(
      fmt::format("job {} ran on {} but no exporter series names it between {} and {}",
                  job.id.empty() ? "(hosts)" : job.id, job.nodes.empty() ? "?" : join(job.nodes),
                  utc_text(job.window.start_ms), utc_text(job.window.end_ms)),
      "asked for " + join(asked, "; "),
      "check that an exporter ran on those nodes then and that the server scraped it; that it "
      "labels GPUs with their job (gpuscope serve does; dcgm-exporter needs its HPC job "
      "mapping directory; jobstats' exporter needs /run/gpustat); or, if the nodes ran only "
      "this job, say it had them to itself so every GPU of them is read");
}

// Series of the job were found (the server's index keeps them by day or block) but none holds a
// sample in its window: said as such, not as an input without runs.
[[noreturn]] void no_samples(const JobWindow& job, std::size_t gpus) {
  throw NoJobSeries(
      fmt::format("the series of job {}'s {} GPU{} hold no sample between {} and {}",
                  job.id.empty() ? "(hosts)" : job.id, gpus, gpus == 1 ? "" : "s",
                  utc_text(job.window.start_ms), utc_text(job.window.end_ms)),
      "the server's index names them, but their samples are gone or were never scraped then",
      "check the job's times, and that the server kept (and scraped) that time");
}

// The scrape interval from one series of the job (ms; 0 when it cannot tell).
double probe_interval(tsdb::Source& source, const JobWindow& job, const JobSeries& js) {
  const JobGpu& gpu = js.gpus.front();
  const SeriesQuery& q = js.queries[gpu.query];
  std::string name;
  for (const auto& n : gpu.names) {
    if (!is_description_series(n)) name = n;
  }
  if (name.empty()) return 0;
  std::vector<tsdb::Matcher> m = {{"__name__", "=", name}};
  m.insert(m.end(), q.matchers.begin(), q.matchers.end());
  if (gpu.has_uuid) m.push_back({gpu.uuid_label, "=", gpu.uuid});
  const std::string sel = tsdb::selector(m);
  tsdb::Window first = job.window;
  first.end_ms = std::min(first.end_ms, first.start_ms + kProbeMs);
  double ms = median_spacing_ms(source.raw(sel, first, 200'000));
  if (ms == 0 && first.end_ms < job.window.end_ms) {
    try {
      ms = median_spacing_ms(source.raw(sel, job.window, 2'000'000));
    } catch (const Error&) {
      ms = 1000;  // too many samples to count: dense enough to summarise
    }
  }
  return ms;
}

std::size_t metric_series(const JobGpu& gpu) {
  return static_cast<std::size_t>(std::count_if(
      gpu.names.begin(), gpu.names.end(), [](const auto& n) { return !is_description_series(n); }));
}

// The job's GPU a series of query `query` belongs to (nullptr: none), by a hash of the GPUs'
// keys: a look through every GPU for each series cost GPUs x series.
class GpuFinder {
 public:
  GpuFinder(const JobSeries& js, const std::vector<std::string>& nodes) : nodes_(nodes) {
    for (const auto& g : js.gpus) index_.try_emplace(std::to_string(g.query) + '/' + g.key, &g);
  }
  const JobGpu* of(std::size_t query, const tsdb::Labels& labels) const {
    const auto it = index_.find(std::to_string(query) + '/' + gpu_key(labels, nodes_));
    return it == index_.end() ? nullptr : it->second;
  }

 private:
  const std::vector<std::string>& nodes_;
  std::unordered_map<std::string, const JobGpu*> index_;
};

// The matchers that read query `q`'s samples. An exporter's job label comes and goes with its
// view of the job's processes, a second or more after the job's own start and end; so where
// every GPU the label found has a UUID and none was shared, their samples are read by UUID over
// the scheduler's window of the job instead, which is the job's. Else the query's own.
std::vector<tsdb::Matcher> sample_matchers(const JobSeries& js, std::size_t q) {
  const SeriesQuery& query = js.queries[q];
  std::string uuids;
  std::string uuid_label;
  for (const auto& g : js.gpus) {
    if (g.query != q) continue;
    if (!g.has_uuid || g.shared || (!uuid_label.empty() && g.uuid_label != uuid_label)) {
      return query.matchers;
    }
    uuid_label = g.uuid_label;
    const std::string quoted = tsdb::regex_quote(g.uuid);  // MIG instances of one GPU share it
    if (("|" + uuids + "|").find("|" + quoted + "|") == std::string::npos) {
      uuids += (uuids.empty() ? "" : "|") + quoted;
    }
  }
  if (query.job_label.empty() || uuids.empty()) return query.matchers;
  return {{uuid_label, "=~", uuids}};
}

// One GPU's pieces: its series with their workload labels (which the exporter adds and drops as
// the job's processes come and go) left out, those with the same other labels merged by time,
// so the samples before, during and after the label are one series. Found by their labels'
// text in a hash (comparing each series with every earlier one took a minute for 50,000 series
// of one GPU), sorted once at the end.
class GpuPieces {
 public:
  void add(tsdb::Series s) {
    std::erase_if(s.labels, [](const auto& label) { return is_workload_label(label.first); });
    std::string key;
    for (const auto& [k, v] : s.labels) {
      key += std::to_string(k.size()) + ':' + k + std::to_string(v.size()) + ':' + v;
    }
    const auto [it, fresh] = index_.try_emplace(std::move(key), pieces_.size());
    if (fresh) {
      pieces_.push_back(std::move(s));
      merged_.push_back(false);
      return;
    }
    auto& points = pieces_[it->second].points;
    points.insert(points.end(), s.points.begin(), s.points.end());
    merged_[it->second] = true;
  }

  // The pieces, each merged one sorted by time with one sample per time (the first that came).
  std::vector<tsdb::Series>& take() {
    for (std::size_t i = 0; i < pieces_.size(); ++i) {
      if (!merged_[i]) continue;
      auto& p = pieces_[i].points;
      std::stable_sort(p.begin(), p.end(),
                       [](const auto& a, const auto& b) { return a.t_ms < b.t_ms; });
      p.erase(std::unique(p.begin(), p.end(),
                          [](const auto& a, const auto& b) { return a.t_ms == b.t_ms; }),
              p.end());
      merged_[i] = false;
    }
    return pieces_;
  }

 private:
  std::vector<tsdb::Series> pieces_;
  std::vector<bool> merged_;
  std::unordered_map<std::string, std::size_t> index_;
};

// Every sample of the job's GPUs, one request per query that found some.
std::map<std::string, GpuTimeline> fetch_raw(tsdb::Source& source, const JobWindow& job,
                                             const JobSeries& js, const MonitoringOptions& options,
                                             double& interval_ms, Notes& notes) {
  std::map<std::string, GpuPieces> by_gpu;
  std::vector<tsdb::Series> all;
  const GpuFinder gpus(js, job.nodes);
  for (std::size_t q = 0; q < js.queries.size(); ++q) {
    if (std::none_of(js.gpus.begin(), js.gpus.end(),
                     [&](const JobGpu& g) { return g.query == q; })) {
      continue;
    }
    std::vector<tsdb::Matcher> m = {{"__name__", "=~", names_regex(js.queries[q].family)}};
    const auto matchers = sample_matchers(js, q);
    m.insert(m.end(), matchers.begin(), matchers.end());
    for (auto& s : source.raw(tsdb::selector(m), job.window, options.max_raw_points)) {
      if (const JobGpu* gpu = gpus.of(q, s.labels)) {
        all.push_back(s);
        by_gpu[gpu->key].add(std::move(s));
      }
    }
  }
  if (const double found = median_spacing_ms(all); found > 0) interval_ms = found;
  std::map<std::string, GpuTimeline> out;
  for (const auto& gpu : js.gpus) {
    GpuTimeline t = raw_timeline(gpu, by_gpu[gpu.key].take(), interval_ms, notes);
    say_gaps(gpu, t.rows, interval_ms, notes);
    out.emplace(gpu.key, std::move(t));
  }
  return out;
}

// One metric's summarised values of one GPU: (bucket end, value) in the order the server's
// series gave them; several series of one GPU and metric give several values per bucket end.
// Flat, as a map of vectors cost ~100 bytes a value (250 MB for 1024 GPUs x 10 metrics x 240
// buckets).
struct Bucketed {
  std::vector<std::pair<std::int64_t, double>> values;
};

// One summarised series name of one query: per GPU and bucket, the mean (gauges) or the value
// at the bucket's end (counters).
void summarise_name(tsdb::Source& source, const JobWindow& job, const JobSeries& js, std::size_t q,
                    const ExportedName& name, std::int64_t step_ms,
                    std::map<std::string, std::map<Metric, Bucketed>>& out) {
  std::vector<tsdb::Matcher> m = {{"__name__", "=", std::string(name.name)}};
  if (!name.label.empty()) m.push_back({std::string(name.label), "=", std::string(name.value)});
  const auto matchers = sample_matchers(js, q);
  m.insert(m.end(), matchers.begin(), matchers.end());
  const std::string expr =
      fmt::format("{}({}[{}s])", name.counter ? "last_over_time" : "avg_over_time",
                  tsdb::selector(m), step_ms / 1000);
  tsdb::Window w = job.window;
  w.start_ms = std::min(w.start_ms + step_ms, w.end_ms);
  const GpuFinder gpus(js, job.nodes);
  for (const auto& s : source.range(expr, w, step_ms)) {
    tsdb::Labels labels = s.labels;
    labels["__name__"] = std::string(name.name);
    const JobGpu* gpu = gpus.of(q, labels);
    if (gpu == nullptr) continue;
    auto& bucketed = out[gpu->key][name.metric];
    for (const auto& p : s.points) {
      // NaN: no sample in the bucket; an infinity is a value, left out and said (ValueScreen).
      if (!std::isnan(p.value) && within(gpu->job_times, p.t_ms, static_cast<double>(step_ms))) {
        bucketed.values.emplace_back(p.t_ms, p.value);
      }
    }
  }
}

// The bucketed values of one GPU as rows at the bucket ends.
GpuTimeline bucket_rows(const JobGpu& gpu, const std::map<Metric, Bucketed>& metrics,
                        const std::map<Metric, const ExportedName*>& names, Notes& notes) {
  std::vector<Reading> readings;
  for (const auto& [metric, b] : metrics) {
    const ExportedName& name = *names.at(metric);
    double scale = name.scale;
    for (const auto& [t, v] : b.values) {
      if (name.ratio_or_percent && v > 1.0) scale = 1.0;
    }
    if (scale != name.scale) {
      notes.once(
          "pct:" + std::string(name.name), gpu.node,
          fmt::format("{} holds values above 1: read as percent, not as a 0-1 ratio", name.name));
    }
    // By bucket end; a stable sort keeps one bucket's values in the order they came.
    std::vector<std::pair<std::int64_t, double>> values = b.values;
    std::stable_sort(values.begin(), values.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    for (std::size_t i = 0; i < values.size();) {
      std::size_t j = i;
      while (j < values.size() && values[j].first == values[i].first) ++j;
      const auto n = static_cast<double>(j - i);
      double v = name.counter ? values[i].second : 0;
      for (std::size_t k = i; k < j; ++k) {
        v = name.counter ? std::max(v, values[k].second) : v + values[k].second / n;
      }
      readings.push_back({values[i].first, metric, v * scale});
      i = j;
    }
  }
  GpuTimeline out;
  out.rows = group_rows(std::move(readings), 0);
  for (const auto& row : out.rows) out.metrics |= row.present;
  return out;
}

// The server's summaries per bucket of every metric the job's GPUs have.
std::map<std::string, GpuTimeline> fetch_summary(tsdb::Source& source, const JobWindow& job,
                                                 const JobSeries& js, std::int64_t step_ms,
                                                 Notes& notes) {
  std::map<std::string, std::map<Metric, Bucketed>> buckets;
  std::map<std::string, std::map<Metric, const ExportedName*>> names_of;
  for (std::size_t q = 0; q < js.queries.size(); ++q) {
    std::set<std::string> names;
    for (const auto& g : js.gpus) {
      if (g.query == q) names.insert(g.names.begin(), g.names.end());
    }
    for (const auto& n : exported_names()) {
      if (n.family != js.queries[q].family || !names.contains(std::string(n.name))) continue;
      summarise_name(source, job, js, q, n, step_ms, buckets);
      for (const auto& g : js.gpus) {
        if (g.query == q) names_of[g.key][n.metric] = &n;
      }
    }
  }
  std::map<std::string, GpuTimeline> out;
  for (const auto& gpu : js.gpus) {
    out.emplace(gpu.key, bucket_rows(gpu, buckets[gpu.key], names_of[gpu.key], notes));
  }
  return out;
}

// GPUs found (by a job label) on nodes the scheduler did not name: read, and said.
void say_other_nodes(const JobWindow& job, const JobSeries& js, Notes& notes) {
  std::vector<std::string> others;
  for (const auto& g : js.gpus) {
    if (std::find(job.nodes.begin(), job.nodes.end(), g.node) == job.nodes.end() &&
        std::find(others.begin(), others.end(), g.node) == others.end()) {
      others.push_back(g.node.empty() ? "(no node label)" : g.node);
    }
  }
  if (others.empty() || job.nodes.empty()) return;
  notes.once("other-nodes", "",
             fmt::format("series labelled with the job came from {}, which the scheduler does "
                         "not name (node labels: hostname, Hostname, node, nodename, instance): "
                         "read under those names",
                         join(others)));
}

}  // namespace

MonitoringResult read_job(tsdb::Source& source, const JobWindow& job,
                          const MonitoringOptions& options, RunTarget& target) {
  check_window(job, options);
  Notes notes;
  const tsdb::ServerInfo server = source.server();
  say_retention(server, job, notes);
  const JobSeries js = find_job_series(source, job, notes);
  if (js.gpus.empty()) no_gpus(job, js);
  MonitoringResult result;
  double interval_ms = probe_interval(source, job, js);
  std::size_t series = 0;
  for (const auto& g : js.gpus) series += metric_series(g);
  const double points = static_cast<double>(series) * static_cast<double>(job.window.length_ms()) /
                        std::max(interval_ms, 1.0);
  result.summarised = options.force_summary || points > static_cast<double>(options.max_raw_points);
  std::map<std::string, GpuTimeline> timelines;
  std::int64_t step_ms = 0;
  if (result.summarised) {
    const auto buckets =
        static_cast<std::int64_t>(std::max<std::size_t>(options.summary_buckets, 1));
    step_ms = std::max<std::int64_t>(
        {job.window.length_ms() / buckets, static_cast<std::int64_t>(interval_ms), 1000});
    step_ms = (step_ms + 999) / 1000 * 1000;
    timelines = fetch_summary(source, job, js, step_ms, notes);
    result.resolution_s = static_cast<double>(step_ms) / 1e3;
  } else {
    timelines = fetch_raw(source, job, js, options, interval_ms, notes);
    result.resolution_s = interval_ms / 1e3;
  }
  // A label query's series come from the server's index, which answers per day (VictoriaMetrics)
  // or per block (Prometheus): GPUs labelled with an earlier pod or job of the same name the same
  // day are among them, with no sample in the window. They are not the job's.
  JobSeries found = js;
  std::erase_if(found.gpus, [&](const JobGpu& g) { return timelines.at(g.key).rows.empty(); });
  if (found.gpus.empty()) no_samples(job, js.gpus.size());
  std::set<Family> families;
  std::vector<std::string> how;
  for (const auto& g : found.gpus) {
    families.insert(js.queries[g.query].family);
    if (std::find(how.begin(), how.end(), js.queries[g.query].how) == how.end()) {
      how.push_back(js.queries[g.query].how);
    }
  }
  for (Family f : families) {
    result.family += (result.family.empty() ? "" : " + ") + std::string(family_name(f));
  }
  result.matched_by = join(how, "; ");
  std::string origin =
      fmt::format("{} at {}, {}'s series, ", server_name(server), server.url, result.family);
  origin += result.summarised
                ? fmt::format(
                      "summarised into buckets of {} (means per bucket; peaks are those "
                      "of bucket means)",
                      duration_text(result.resolution_s))
                : fmt::format("{} scrape", duration_text(result.resolution_s));
  if (result.summarised) {
    // Asked for (--summary, --keep-summary) it is no limit's doing, however few samples there are.
    const std::string why =
        points > static_cast<double>(options.max_raw_points)
            ? fmt::format("about {:.3g} samples would be read, more than {}", points,
                          options.max_raw_points)
            : fmt::format("as asked (about {:.3g} samples would have been read)", points);
    notes.once("summary", "",
               fmt::format("the timeline is summarised: {}, so the server's mean per {} bucket "
                           "is read instead (peaks are those of bucket means; energy from the "
                           "counter stays exact)",
                           why, duration_text(result.resolution_s)));
  }
  say_other_nodes(job, found, notes);
  if (!js.nodes_missing.empty()) {
    notes.once(
        "missing", "",
        fmt::format("no exporter series of {} were found: {} not in the analysis",
                    join(js.nodes_missing), js.nodes_missing.size() == 1 ? "it is" : "they are"));
  }
  for (const auto& w : source.warnings()) notes.once("warn:" + w, "", "the server warned: " + w);
  result.samples = write_job_runs(job, found, timelines, origin, result.resolution_s, notes, target,
                                  result.runs);
  result.gpus = found.gpus.size();
  result.nodes_missing = js.nodes_missing;
  result.notes = notes.texts();
  return result;
}

}  // namespace gpuscope::ingest
