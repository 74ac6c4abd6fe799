#include "fleet/gpu_aggregates.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

#include "fleet/job_queries.hpp"
#include "ingest/monitoring/exporter_families.hpp"
#include "ingest/monitoring/exporter_labels.hpp"
#include "tsdb/promql.hpp"

namespace gpuscope::fleet {

namespace {

// What is asked of each GPU, one slot per figure.
enum class Slot {
  UtilMean,
  UtilCount,
  UtilIdle,
  SmActive,
  Occupancy,
  Fp64,
  Fp32,
  Fp16,
  Tensor,
  MemoryPeak,
  MemoryUsedMean,
  MemoryFreeMean,
  MemoryTotal,
  EnergyRise,
  PowerMean,
  Health,
  Count
};
constexpr std::size_t kSlots = static_cast<std::size_t>(Slot::Count);

struct Ask {
  Slot slot;
  Metric metric;
  Reduce reduce;
};

constexpr std::array<Ask, 14> kAsks = {{
    {Slot::UtilMean, Metric::GpuUtilPct, Reduce::Mean},
    {Slot::UtilCount, Metric::GpuUtilPct, Reduce::Count},
    {Slot::UtilIdle, Metric::GpuUtilPct, Reduce::Idle},
    {Slot::SmActive, Metric::SmActivePct, Reduce::Mean},
    {Slot::Occupancy, Metric::SmOccupancyPct, Reduce::Mean},
    {Slot::Fp64, Metric::Fp64ActivePct, Reduce::Mean},
    {Slot::Fp32, Metric::Fp32ActivePct, Reduce::Mean},
    {Slot::Fp16, Metric::Fp16ActivePct, Reduce::Mean},
    {Slot::Tensor, Metric::TensorActivePct, Reduce::Mean},
    {Slot::MemoryPeak, Metric::MemoryUsedBytes, Reduce::Max},
    {Slot::MemoryUsedMean, Metric::MemoryUsedBytes, Reduce::Mean},
    {Slot::MemoryFreeMean, Metric::MemoryFreeBytes, Reduce::Mean},
    {Slot::EnergyRise, Metric::EnergyMj, Reduce::Rise},
    {Slot::PowerMean, Metric::PowerW, Reduce::Mean},
}};

// The series that give a GPU's memory size (ingest::memory_total_bytes converts their values).
struct TotalAsk {
  ingest::Family family;
  std::string_view name;
};
constexpr std::array<TotalAsk, 3> kMemoryTotals = {{
    {ingest::Family::Jobstats, "nvidia_gpu_memory_total_bytes"},
    {ingest::Family::Dcgm, "DCGM_FI_DEV_FB_TOTAL"},
    {ingest::Family::Dcgm, "DCGM_FI_DEV_FB_CAPACITY_BYTES"},
}};

// Health series (not metrics of the catalog): a fault is a rise, a change or a 1.
struct HealthAsk {
  ingest::Family family;
  std::string_view selector_name;
  std::string_view matchers;  // extra matchers, "" for none
  Reduce reduce;
};
constexpr std::array<HealthAsk, 6> kHealthAsks = {{
    {ingest::Family::Gpuscope, "gpuscope_gpu_xid_errors_total", "", Reduce::Rise},
    {ingest::Family::Gpuscope, "gpuscope_gpu_ecc_errors_total",
     R"(type="uncorrected",counter="volatile")", Reduce::Rise},
    {ingest::Family::Gpuscope, "gpuscope_gpu_row_remap_failure", "", Reduce::Max},
    {ingest::Family::Dcgm, "DCGM_FI_DEV_XID_ERRORS", "", Reduce::Changes},
    {ingest::Family::Dcgm, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "", Reduce::Rise},
    {ingest::Family::Dcgm, "DCGM_FI_DEV_ROW_REMAP_FAILURE", "", Reduce::Max},
}};

using Slots = std::array<std::optional<double>, kSlots>;

struct Found {
  GpuAggregate gpu;
  Slots slots;
};

// The batch being read: its jobs and where answers go.
struct Batch {
  std::map<std::string, const AggregateJob*> by_id;
  std::map<std::pair<std::string, std::string>, Found> found;  // (job, GPU key)
};

// How one label convention is asked: the jobs, and per job the matcher of its GPUs' series.
struct Asking {
  ingest::Family family;
  std::string label;
  bool list = false;
  std::vector<const AggregateJob*> jobs;
  std::map<const AggregateJob*, std::string> matcher;
};

// The matcher of the series labelled with `job` (a list label holds "123,124").
std::string label_matcher(const Asking& asking, const std::string& job) {
  if (asking.list) {
    return fmt::format("{}=~{}", asking.label,
                       tsdb::quote("(.*,)?" + tsdb::regex_quote(job) + "(,.*)?"));
  }
  return fmt::format("{}={}", asking.label, tsdb::quote(job));
}

std::string selector(std::string_view name, std::string_view extra, const std::string& matcher) {
  return extra.empty() ? fmt::format("{}{{{}}}", name, matcher)
                       : fmt::format("{}{{{},{}}}", name, extra, matcher);
}

const AggregateJob* job_of(const tsdb::Labels& labels, const Batch& batch) {
  const auto it = labels.find(std::string(kJobMark));
  if (it == labels.end()) return nullptr;
  const auto job = batch.by_id.find(it->second);
  return job == batch.by_id.end() ? nullptr : job->second;
}

// One query: `piece(job)` for every job of `jobs`, marked and joined; its answers by job.
template <typename Piece, typename Take>
void query(tsdb::Source& source, const Batch& batch, const std::vector<const AggregateJob*>& jobs,
           Piece piece, Take take, std::size_t& queries) {
  std::vector<std::string> pieces, ids;
  std::int64_t at = 0;
  for (const AggregateJob* job : jobs) {
    pieces.push_back(piece(*job));
    ids.push_back(job->id);
    at = std::max(at, job->end_ms + 999);
  }
  ++queries;
  for (const auto& series : source.instant(joined_pieces(pieces, ids), at)) {
    if (series.points.empty() || !std::isfinite(series.points.back().value)) continue;
    if (const AggregateJob* job = job_of(series.labels, batch)) take(*job, series);
  }
}

Found& entry(Batch& batch, const AggregateJob& job, const tsdb::Labels& labels,
             ingest::Family family) {
  const std::string key = ingest::gpu_key(labels, job.nodes);
  auto [it, added] = batch.found.try_emplace({job.id, key});
  if (added) {
    GpuAggregate& g = it->second.gpu;
    g.key = key;
    g.node = ingest::node_of(labels, job.nodes);
    g.index = ingest::gpu_index(labels);
    if (const std::string* model = ingest::gpu_model(labels)) g.model = *model;
    if (const auto mig = ingest::mig_instance(labels)) g.mig_profile = mig->profile;
    g.family = std::string(ingest::family_name(family));
  }
  return it->second;
}

// One reduction of one series name for every job asked, into its slot (added up for health).
void ask(tsdb::Source& source, Batch& batch, const Asking& asking, std::string_view name,
         std::string_view extra, Reduce reduce, double scale, Slot slot,
         const AggregateOptions& options, std::size_t& queries) {
  ReduceAsk r{reduce, reduce == Reduce::Idle ? options.idle_util_pct / scale : 0,
              source.server().kind, options.idle_step_ms};
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
        [&](const AggregateJob& job) {
          const JobWindowText w = window_text(job);
          return fmt::format("count by ({}) (count_over_time({}[{}] {}))", kIdentity,
                             selector(name.name, {}, label_matcher(asking, job.id)), w.range, w.at);
        },
        [&](const AggregateJob& job, const tsdb::Series& s) { add_found(found[&job], s.labels); },
        queries);
  }
  return found;
}

// The jobs whose GPUs carried another job's label too during their window (the exporter labels
// a GPU with the workload of the moment): only their labelled samples are theirs.
std::set<const AggregateJob*> shared(tsdb::Source& source, const Batch& batch, const Asking& asking,
                                     const std::map<const AggregateJob*, Labelled>& found,
                                     std::size_t& queries) {
  std::vector<const AggregateJob*> jobs;
  for (const auto& [job, l] : found) {
    if (l.by_uuid && !l.uuids.empty()) jobs.push_back(job);
  }
  std::set<const AggregateJob*> out;
  if (jobs.empty()) return out;
  for (const auto& name : ingest::exported_names()) {
    if (name.family != asking.family || name.metric != Metric::GpuUtilPct) continue;
    query(
        source, batch, jobs,
        [&](const AggregateJob& job) {
          const Labelled& l = found.at(&job);
          std::string uuids;
          for (const auto& u : l.uuids) uuids += (uuids.empty() ? "" : "|") + tsdb::regex_quote(u);
          const std::string mine = asking.list ? "(.*,)?" + tsdb::regex_quote(job.id) + "(,.*)?"
                                               : tsdb::regex_quote(job.id);
          const JobWindowText w = window_text(job);
          return fmt::format("count(count_over_time({}{{{}=~{},{}!=\"\",{}!~{}}}[{}] {}))",
                             name.name, l.uuid_label, tsdb::quote(uuids), asking.label,
                             asking.label, tsdb::quote(mine), w.range, w.at);
        },
        [&](const AggregateJob& job, const tsdb::Series&) { out.insert(&job); }, queries);
  }
  return out;
}

void ask_all(tsdb::Source& source, Batch& batch, const Asking& asking,
             const AggregateOptions& options, std::size_t& queries) {
  for (const Ask& a : kAsks) {
    for (const auto& name : ingest::exported_names()) {
      if (name.family != asking.family || name.metric != a.metric) continue;
      std::string extra;
      if (!name.label.empty()) extra = fmt::format("{}={}", name.label, tsdb::quote(name.value));
      ask(source, batch, asking, name.name, extra, a.reduce, name.scale, a.slot, options, queries);
    }
  }
  for (const TotalAsk& t : kMemoryTotals) {
    if (t.family != asking.family) continue;
    const double scale = ingest::memory_total_bytes(std::string(t.name), 1).value_or(1);
    ask(source, batch, asking, t.name, {}, Reduce::Mean, scale, Slot::MemoryTotal, options,
        queries);
  }
  for (const HealthAsk& h : kHealthAsks) {
    if (h.family != asking.family) continue;
    ask(source, batch, asking, h.selector_name, h.matchers, h.reduce, 1, Slot::Health, options,
        queries);
  }
}

// Finds the jobs of `asking` that its label names, chooses how each one's samples are read
// (by its GPUs' UUIDs over its window, as `gpuscope job` reads them, unless a GPU lacks a UUID,
// is a MIG instance or was shared: then its labelled samples), and asks every figure.
void read_convention(tsdb::Source& source, Batch& batch, Asking asking,
                     const AggregateOptions& options, AggregateRead& read) {
  const auto found = discover(source, batch, asking, read.queries);
  if (found.empty()) return;
  const auto shared_jobs = shared(source, batch, asking, found, read.queries);
  asking.jobs.clear();
  for (const auto& [job, l] : found) {
    asking.jobs.push_back(job);
    std::string& m = asking.matcher[job];
    if (l.by_uuid && !l.uuids.empty() && shared_jobs.count(job) == 0) {
      std::string uuids;
      for (const auto& u : l.uuids) uuids += (uuids.empty() ? "" : "|") + tsdb::regex_quote(u);
      m = fmt::format("{}=~{}", l.uuid_label, tsdb::quote(uuids));
    } else {
      m = label_matcher(asking, job->id);
      if (shared_jobs.count(job) != 0) {
        read.notes[job->id].push_back(fmt::format(
            "a GPU of it carried another job's {} label during its window too: only the samples "
            "labelled with it count",
            asking.label));
      }
    }
    read.matched_by[job->id] =
        fmt::format("{}'s label {}", ingest::family_name(asking.family), asking.label);
  }
  ask_all(source, batch, asking, options, read.queries);
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

// One batch of jobs: each label convention in turn for the jobs not found yet.
void read_batch(tsdb::Source& source, std::span<const AggregateJob* const> jobs,
                const AggregateOptions& options, AggregateRead& read) {
  Batch batch;
  for (const AggregateJob* job : jobs) batch.by_id.emplace(job->id, job);
  std::vector<const AggregateJob*> left(jobs.begin(), jobs.end());
  for (const auto& convention : ingest::kSlurmJobLabels) {
    for (const std::string prefix : {"", "exported_"}) {
      if (left.empty()) break;
      Asking asking{
          convention.family, prefix + std::string(convention.label), convention.list, left, {}};
      read_convention(source, batch, asking, options, read);
      std::erase_if(left, [&](const AggregateJob* j) { return read.matched_by.count(j->id) != 0; });
    }
  }
  for (auto& [key, found] : batch.found) {
    read.by_job[key.first].push_back(finish(std::move(found)));
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
