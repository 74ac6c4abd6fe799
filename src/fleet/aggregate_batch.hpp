// The figures asked of a batch of jobs' GPUs and where the answers go, shared by the ways of
// reading a batch (gpu_aggregates.cpp: one selector per series name, for any server;
// labelled_metricsql.cpp: one selector for every name, VictoriaMetrics' MetricsQL). Internal
// to fleet/.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fleet/gpu_aggregates.hpp"
#include "fleet/job_queries.hpp"
#include "ingest/monitoring/exporter_families.hpp"
#include "ingest/monitoring/exporter_labels.hpp"
#include "tsdb/client.hpp"

namespace gpuscope::fleet {

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

// Whether `figures` asks for `slot`.
constexpr bool slot_asked(Figures figures, Slot slot) {
  switch (figures) {
    case Figures::All:
      return true;
    case Figures::UtilizationAndMemory:
      if (slot == Slot::MemoryPeak || slot == Slot::MemoryUsedMean ||
          slot == Slot::MemoryFreeMean || slot == Slot::MemoryTotal)
        return true;
      [[fallthrough]];
    case Figures::Utilization:
      return slot == Slot::UtilMean || slot == Slot::UtilCount || slot == Slot::UtilIdle;
  }
  return true;
}

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

// A family's job label asked for the jobs of a batch at once: `L=~"id|id|..."` over a window
// holding every one of them, answers grouped by the label and the GPU. A job's samples are the
// samples labelled with it (the exporter's view of its processes), wherever they fall.
struct LabelAsk {
  ingest::JobLabel convention;
  std::string label;
};

// `name{extra,matcher}`, or `name{matcher}` without extra matchers.
std::string selector(std::string_view name, std::string_view extra, const std::string& matcher);

// The job ids as one regex alternation (each quoted); a list label's `(.*,)?(...)(,.*)?`.
std::string ids_regex(const std::vector<const AggregateJob*>& jobs, bool list);

// The jobs of `batch` a series' job label names (a list label may name several).
std::vector<const AggregateJob*> jobs_named(const tsdb::Labels& labels, const std::string& label,
                                            bool list, const Batch& batch);

// The answers' entry of a job's GPU (made on first use from the series' labels).
Found& entry(Batch& batch, const AggregateJob& job, const tsdb::Labels& labels,
             ingest::Family family);

// The GPUs of `jobs` that `l` labels, for VictoriaMetrics: every series name at once (MetricsQL,
// labelled_metricsql.cpp). Marks the jobs found in `read`.
void read_labelled_metricsql(tsdb::Source& source, Batch& batch, const LabelAsk& l,
                             const std::vector<const AggregateJob*>& jobs,
                             const AggregateOptions& options, AggregateRead& read);

// One expression over `jobs` (built by `expr` from their regex and window); a refusal for a
// limit of the server's (samples per query, query length) is asked again in two halves.
template <typename Expr, typename Take>
void batch_query(tsdb::Source& source, std::span<const AggregateJob* const> jobs, bool list,
                 const AggregateOptions& options, Expr expr, Take take, std::size_t& queries) {
  std::int64_t from = jobs.front()->start_ms, to = jobs.front()->end_ms;
  for (const AggregateJob* job : jobs) {
    from = std::min(from, job->start_ms);
    to = std::max(to, job->end_ms);
  }
  const JobWindowText w = span_text(from, to, options.slack_ms);
  const std::vector<const AggregateJob*> asked(jobs.begin(), jobs.end());
  ++queries;
  std::vector<tsdb::Series> answer;
  try {
    answer = source.instant(expr(ids_regex(asked, list), w), w.at_ms);
  } catch (const tsdb::LimitError&) {
    if (jobs.size() == 1) throw;
    const std::size_t half = jobs.size() / 2;
    batch_query(source, jobs.first(half), list, options, expr, take, queries);
    batch_query(source, jobs.subspan(half), list, options, expr, take, queries);
    return;
  }
  for (const auto& series : answer) {
    if (!series.points.empty() && std::isfinite(series.points.back().value)) take(series);
  }
}

}  // namespace gpuscope::fleet
