#include "fleet/gpu_aggregates.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <set>

#include "fleet/aggregate_batch.hpp"
#include "fleet/job_queries.hpp"
#include "ingest/monitoring/exporter_families.hpp"
#include "ingest/monitoring/exporter_labels.hpp"
#include "tsdb/client.hpp"
#include "tsdb/promql.hpp"

namespace gpuscope::fleet {

namespace {

// How one way of finding jobs' GPUs is asked (a family's job label, jobstats' job-id series, the
// nodes of exclusive jobs): the jobs, how each one's GPUs are found, and per job the matcher of
// its GPUs' series once found.
struct Asking {
  ingest::Family family;
  std::string label;  // the job label; "" when the GPUs are not found by one
  bool list = false;
  std::vector<const AggregateJob*> jobs;
  std::map<const AggregateJob*, std::string> matcher;
  // The matcher of a job's series when they cannot be read by UUID; "" when there is none.
  std::function<std::string(const AggregateJob&)> fallback;
  // The query piece that finds a job's GPUs (counted by kIdentity's labels), for a utilization
  // series name; `once`: the piece does not depend on the name.
  std::function<std::string(const AggregateJob&, std::string_view)> find;
  bool once = false;
  std::string how;  // for AggregateRead::matched_by
};

const AggregateJob* job_of(const tsdb::Labels& labels, const Batch& batch) {
  const auto it = labels.find(std::string(kJobMark));
  if (it == labels.end()) return nullptr;
  const auto job = batch.by_id.find(it->second);
  return job == batch.by_id.end() ? nullptr : job->second;
}

// One query: `piece(job)` for every job of `jobs`, marked and joined; its answers by job.
// A query the server refuses for one of its limits (samples per query) is asked again in two
// halves of the jobs, down to one job.
template <typename Piece, typename Take>
void query(tsdb::Source& source, const Batch& batch, std::span<const AggregateJob* const> jobs,
           Piece piece, Take take, std::size_t& queries) {
  std::vector<std::string> pieces, ids;
  std::int64_t at = 0;
  for (const AggregateJob* job : jobs) {
    pieces.push_back(piece(*job));
    ids.push_back(job->id);
    at = std::max(at, job->end_ms + 999);
  }
  ++queries;
  std::vector<tsdb::Series> answer;
  try {
    answer = source.instant(joined_pieces(pieces, ids), at);
  } catch (const tsdb::LimitError&) {
    if (jobs.size() == 1) throw;
    const std::size_t half = jobs.size() / 2;
    query(source, batch, jobs.first(half), piece, take, queries);
    query(source, batch, jobs.subspan(half), piece, take, queries);
    return;
  }
  for (const auto& series : answer) {
    if (series.points.empty() || !std::isfinite(series.points.back().value)) continue;
    if (const AggregateJob* job = job_of(series.labels, batch)) take(*job, series);
  }
}

// One reduction of one series name for every job asked, into its slot (added up for health).
void ask(tsdb::Source& source, Batch& batch, const Asking& asking, std::string_view name,
         std::string_view extra, Reduce reduce, double scale, Slot slot,
         const AggregateOptions& options, std::size_t& queries) {
  ReduceAsk r{reduce,
              reduce == Reduce::Idle ? options.idle_util_pct / scale : 0,
              source.server().kind,
              options.idle_step_ms,
              {}};
  const bool scaled = reduce == Reduce::Mean || reduce == Reduce::Max || reduce == Reduce::Rise;
  query(
      source, batch, asking.jobs,
      [&](const AggregateJob& job) {
        return reduce_expr(r, selector(name, extra, asking.matcher.at(&job)), window_text(job));
      },
      [&](const AggregateJob& job, const tsdb::Series& series) {
        const double value = series.points.back().value * (scaled ? scale : 1);
        auto& s =
            entry(batch, job, series.labels, asking.family).slots[static_cast<std::size_t>(slot)];
        if (slot == Slot::Health) {
          s = s.value_or(0) + value;
        } else if (!s) {
          s = value;  // the first name found for the figure wins (the families' order)
        }
      },
      queries);
}

// What the job label found of a job's GPUs: their UUIDs (and the label holding them), and
// whether every one had one and none was a MIG instance (else only labelled samples are read).
struct Labelled {
  std::set<std::string> uuids;
  std::string uuid_label;
  bool by_uuid = true;
};

void add_found(Labelled& l, const tsdb::Labels& labels) {
  const std::string* uuid = ingest::gpu_uuid(labels);
  if (uuid == nullptr || uuid->empty() || ingest::mig_instance(labels)) {
    l.by_uuid = false;
    return;
  }
  for (const char* key : {"uuid", "UUID", "gpu_uuid"}) {
    const auto it = labels.find(key);
    if (it == labels.end() || &it->second != uuid) continue;
    if (!l.uuid_label.empty() && l.uuid_label != key) l.by_uuid = false;
    l.uuid_label = key;
  }
  l.uuids.insert(*uuid);
}

constexpr std::string_view kIdentity = "uuid, UUID, gpu_uuid, GPU_I_ID, gpu_instance_id";

// The jobs of `asking` some utilization series of its family names under its label, and their
// GPUs as the label found them.
std::map<const AggregateJob*, Labelled> discover(tsdb::Source& source, const Batch& batch,
                                                 const Asking& asking, std::size_t& queries) {
  std::map<const AggregateJob*, Labelled> found;
  for (const auto& name : ingest::exported_names()) {
    if (name.family != asking.family || name.metric != Metric::GpuUtilPct) continue;
    query(
        source, batch, asking.jobs,
        [&](const AggregateJob& job) { return asking.find(job, name.name); },
        [&](const AggregateJob& job, const tsdb::Series& s) { add_found(found[&job], s.labels); },
        queries);
    if (asking.once) break;
  }
  return found;
}

void ask_all(tsdb::Source& source, Batch& batch, const Asking& asking,
             const AggregateOptions& options, std::size_t& queries) {
  const Figures f = options.figures;
  for (const Ask& a : kAsks) {
    if (!slot_asked(f, a.slot)) continue;
    for (const auto& name : ingest::exported_names()) {
      if (name.family != asking.family || name.metric != a.metric) continue;
      std::string extra;
      if (!name.label.empty()) extra = fmt::format("{}={}", name.label, tsdb::quote(name.value));
      ask(source, batch, asking, name.name, extra, a.reduce, name.scale, a.slot, options, queries);
    }
  }
  for (const TotalAsk& t : kMemoryTotals) {
    if (t.family != asking.family || !slot_asked(f, Slot::MemoryTotal)) continue;
    const double scale = ingest::memory_total_bytes(std::string(t.name), 1).value_or(1);
    ask(source, batch, asking, t.name, {}, Reduce::Mean, scale, Slot::MemoryTotal, options,
        queries);
  }
  for (const HealthAsk& h : kHealthAsks) {
    if (h.family != asking.family || !slot_asked(f, Slot::Health)) continue;
    ask(source, batch, asking, h.selector_name, h.matchers, h.reduce, 1, Slot::Health, options,
        queries);
  }
}

// Finds the jobs of `asking`, chooses how each one's samples are read (by its GPUs' UUIDs over
// its window, as `gpuscope job` reads them, unless a GPU lacks one, is a MIG instance or was
// shared: then the fallback, its labelled samples), and asks every figure.
void read_convention(tsdb::Source& source, Batch& batch, Asking asking,
                     const AggregateOptions& options, AggregateRead& read) {
  const auto found = discover(source, batch, asking, read.queries);
  if (found.empty()) return;
  asking.jobs.clear();
  for (const auto& [job, l] : found) {
    std::string m;
    if (l.by_uuid && !l.uuids.empty()) {
      std::string uuids;
      for (const auto& u : l.uuids) uuids += (uuids.empty() ? "" : "|") + tsdb::regex_quote(u);
      m = fmt::format("{}=~{}", l.uuid_label, tsdb::quote(uuids));
    } else {
      m = asking.fallback ? asking.fallback(*job) : "";
    }
    if (m.empty()) {
      read.notes[job->id].push_back(fmt::format(
          "{} names GPUs without a UUID, which cannot be told apart from other jobs'", asking.how));
      continue;
    }
    asking.jobs.push_back(job);
    asking.matcher[job] = m;
    read.matched_by[job->id] = asking.how;
  }
  if (!asking.jobs.empty()) ask_all(source, batch, asking, options, read.queries);
}

// The count of a job's GPUs among the utilization series `name` matching `matcher` in its window.
std::string count_gpus(std::string_view name, const std::string& matcher, const AggregateJob& job) {
  const JobWindowText w = window_text(job);
  return fmt::format("count by ({}) (count_over_time({}[{}] {}))", kIdentity,
                     selector(name, {}, matcher), w.range, w.at);
}

// jobstats' exporter names the job in a series of its own, nvidia_gpu_jobId, whose value is the
// job id: the GPUs whose value is the job's in the middle of its window.
Asking by_jobstats_id(std::vector<const AggregateJob*> jobs) {
  Asking a{ingest::Family::Jobstats, {}, false, std::move(jobs), {}, {}, {}, true, {}};
  a.find = [](const AggregateJob& job, std::string_view) {
    const std::int64_t mid = job.start_ms + (job.end_ms + 999 - job.start_ms) / 2;
    return fmt::format("count by ({}) ({} @ {}.{:03} == {})", kIdentity, ingest::kJobstatsJobId,
                       mid / 1000, mid % 1000, job.id);
  };
  a.how = fmt::format("jobstats' {} series", ingest::kJobstatsJobId);
  return a;
}

// The GPUs of a job's nodes when they ran nothing else in its window (sacct says so): a series
// whose node label names one of them, for exporters that name no job.
Asking by_nodes(ingest::Family family, std::string_view node_label,
                std::vector<const AggregateJob*> jobs) {
  Asking a{family, {}, false, std::move(jobs), {}, {}, {}, false, {}};
  auto matcher = [label = std::string(node_label)](const AggregateJob& job) {
    std::string hosts;
    for (const auto& n : job.nodes) hosts += (hosts.empty() ? "" : "|") + tsdb::regex_quote(n);
    return fmt::format("{}=~{}", label, tsdb::quote("(" + hosts + ")([.:].*)?"));
  };
  a.fallback = matcher;
  a.find = [matcher](const AggregateJob& job, std::string_view name) {
    return count_gpus(name, matcher(job), job);
  };
  a.how = fmt::format("{}'s series of the job's nodes ({}), which ran nothing else",
                      ingest::family_name(family), node_label);
  return a;
}

// --- Jobs an exporter labels: one search per series name for a whole batch ---------------

void ask_labelled(tsdb::Source& source, Batch& batch, const LabelAsk& l,
                  const std::vector<const AggregateJob*>& jobs, std::string_view name,
                  std::string_view extra, Reduce reduce, double scale, Slot slot,
                  const AggregateOptions& options, std::size_t& queries) {
  ReduceAsk r{reduce, reduce == Reduce::Idle ? options.idle_util_pct / scale : 0,
              source.server().kind, options.idle_step_ms, l.label};
  const bool scaled = reduce == Reduce::Mean || reduce == Reduce::Max || reduce == Reduce::Rise;
  batch_query(
      source, jobs, l.convention.list, options,
      [&](const std::string& regex, const JobWindowText& w) {
        const std::string m = fmt::format("{}=~{}", l.label, tsdb::quote(regex));
        return reduce_expr(r, selector(name, extra, m), w);
      },
      [&](const tsdb::Series& series) {
        const double value = series.points.back().value * (scaled ? scale : 1);
        for (const AggregateJob* job :
             jobs_named(series.labels, l.label, l.convention.list, batch)) {
          auto& s = entry(batch, *job, series.labels, l.convention.family)
                        .slots[static_cast<std::size_t>(slot)];
          if (slot == Slot::Health) {
            s = s.value_or(0) + value;
          } else if (!s) {
            s = value;  // the first name found for the figure wins (the families' order)
          }
        }
      },
      queries);
}

// The jobs of `jobs` some utilization series of the family names under the label.
std::vector<const AggregateJob*> labelled_jobs(tsdb::Source& source, const Batch& batch,
                                               const LabelAsk& l,
                                               const std::vector<const AggregateJob*>& jobs,
                                               const AggregateOptions& options,
                                               std::size_t& queries) {
  std::set<const AggregateJob*> found;
  for (const auto& name : ingest::exported_names()) {
    if (name.family != l.convention.family || name.metric != Metric::GpuUtilPct) continue;
    batch_query(
        source, jobs, l.convention.list, options,
        [&](const std::string& regex, const JobWindowText& w) {
          return fmt::format("count by ({}) (count_over_time({}{{{}=~{}}}[{}] {}))", l.label,
                             name.name, l.label, tsdb::quote(regex), w.range, w.at);
        },
        [&](const tsdb::Series& s) {
          for (const AggregateJob* job : jobs_named(s.labels, l.label, l.convention.list, batch)) {
            found.insert(job);
          }
        },
        queries);
  }
  std::vector<const AggregateJob*> out;
  for (const AggregateJob* job : jobs) {
    if (found.count(job) != 0) out.push_back(job);
  }
  return out;
}

// Reads the jobs of `jobs` that `l` names; marks them found in `read`.
void read_labelled(tsdb::Source& source, Batch& batch, const LabelAsk& l,
                   const std::vector<const AggregateJob*>& jobs, const AggregateOptions& options,
                   AggregateRead& read) {
  const auto found = labelled_jobs(source, batch, l, jobs, options, read.queries);
  if (found.empty()) return;
  const ingest::Family family = l.convention.family;
  const Figures f = options.figures;
  for (const Ask& a : kAsks) {
    if (!slot_asked(f, a.slot)) continue;
    for (const auto& name : ingest::exported_names()) {
      if (name.family != family || name.metric != a.metric) continue;
      std::string extra;
      if (!name.label.empty()) extra = fmt::format("{}={}", name.label, tsdb::quote(name.value));
      ask_labelled(source, batch, l, found, name.name, extra, a.reduce, name.scale, a.slot, options,
                   read.queries);
    }
  }
  for (const TotalAsk& t : kMemoryTotals) {
    if (t.family != family || !slot_asked(f, Slot::MemoryTotal)) continue;
    const double scale = ingest::memory_total_bytes(std::string(t.name), 1).value_or(1);
    ask_labelled(source, batch, l, found, t.name, {}, Reduce::Mean, scale, Slot::MemoryTotal,
                 options, read.queries);
  }
  for (const HealthAsk& h : kHealthAsks) {
    if (h.family != family || !slot_asked(f, Slot::Health)) continue;
    ask_labelled(source, batch, l, found, h.selector_name, h.matchers, h.reduce, 1, Slot::Health,
                 options, read.queries);
  }
  for (const AggregateJob* job : found) {
    read.matched_by[job->id] = fmt::format("{}'s label {}", ingest::family_name(family), l.label);
  }
}

GpuAggregate finish(Found&& f) {
  GpuAggregate g = std::move(f.gpu);
  const auto slot = [&](Slot s) { return f.slots[static_cast<std::size_t>(s)]; };
  g.samples = slot(Slot::UtilCount).value_or(0);
  g.util_pct = slot(Slot::UtilMean);
  g.idle_share = slot(Slot::UtilIdle);
  g.sm_active_pct = slot(Slot::SmActive);
  g.occupancy_pct = slot(Slot::Occupancy);
  std::optional<double> flop;
  for (const Slot s : {Slot::Fp64, Slot::Fp32, Slot::Fp16, Slot::Tensor}) {
    if (slot(s)) flop = flop.value_or(0) + *slot(s);
  }
  g.flop_pct = flop;
  g.memory_peak_bytes = slot(Slot::MemoryPeak);
  g.memory_used_mean_bytes = slot(Slot::MemoryUsedMean);
  g.memory_free_mean_bytes = slot(Slot::MemoryFreeMean);
  g.memory_total_bytes = slot(Slot::MemoryTotal);
  // The catalog's energy is in mJ.
  if (const auto rise = slot(Slot::EnergyRise)) g.energy_rise_j = *rise / 1000;
  g.power_mean_w = slot(Slot::PowerMean);
  g.health_faults = slot(Slot::Health);
  return g;
}

// One batch of jobs: each way of finding their GPUs in turn for the jobs not found yet.
void read_batch(tsdb::Source& source, std::span<const AggregateJob* const> jobs,
                const AggregateOptions& options, AggregateRead& read) {
  Batch batch;
  for (const AggregateJob* job : jobs) batch.by_id.emplace(job->id, job);
  std::vector<const AggregateJob*> left(jobs.begin(), jobs.end());
  auto found = [&](const Asking& asking) {
    read_convention(source, batch, asking, options, read);
    std::erase_if(left, [&](const AggregateJob* j) { return read.matched_by.count(j->id) != 0; });
  };
  for (const auto& convention : ingest::kSlurmJobLabels) {
    for (const std::string prefix : {"", "exported_"}) {
      if (left.empty()) break;
      const LabelAsk l{convention, prefix + std::string(convention.label)};
      if (source.server().kind == tsdb::ServerKind::VictoriaMetrics) {
        read_labelled_metricsql(source, batch, l, left, options, read);
      } else {
        read_labelled(source, batch, l, left, options, read);
      }
      std::erase_if(left, [&](const AggregateJob* j) { return read.matched_by.count(j->id) != 0; });
    }
  }
  std::vector<const AggregateJob*> numeric;
  for (const AggregateJob* j : left) {
    const bool digits =
        std::all_of(j->id.begin(), j->id.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!j->id.empty() && digits) numeric.push_back(j);
  }
  if (!numeric.empty()) found(by_jobstats_id(numeric));
  for (const ingest::Family family : ingest::kFamilies) {
    for (const std::string_view node_label : ingest::kNodeLabels) {
      std::vector<const AggregateJob*> alone;
      for (const AggregateJob* j : left) {
        if (j->exclusive && !j->nodes.empty()) alone.push_back(j);
      }
      if (!alone.empty()) found(by_nodes(family, node_label, alone));
    }
  }
  for (auto& [key, found_gpu] : batch.found) {
    read.by_job[key.first].push_back(finish(std::move(found_gpu)));
  }
}

}  // namespace

AggregateRead read_gpu_aggregates(tsdb::Source& source, std::span<const AggregateJob> jobs,
                                  const AggregateOptions& options) {
  AggregateRead read;
  std::vector<const AggregateJob*> order;
  for (const auto& job : jobs) order.push_back(&job);
  // Jobs that ended close together share a batch, so its window stays short.
  std::sort(order.begin(), order.end(), [](const AggregateJob* a, const AggregateJob* b) {
    return a->end_ms != b->end_ms ? a->end_ms < b->end_ms : a->id < b->id;
  });
  const std::size_t per = std::max<std::size_t>(1, options.jobs_per_query);
  for (std::size_t at = 0; at < order.size(); at += per) {
    const std::size_t n = std::min(per, order.size() - at);
    read_batch(source, std::span<const AggregateJob* const>(order.data() + at, n), options, read);
  }
  return read;
}

}  // namespace gpuscope::fleet
