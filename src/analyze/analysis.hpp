// The result of `gpuscope analyze`: plain data that report/ renders as tables, JSON or CSV.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyze/balance.hpp"
#include "analyze/carbon.hpp"
#include "analyze/energy.hpp"
#include "analyze/mig_share.hpp"
#include "analyze/node_energy.hpp"
#include "analyze/phases.hpp"
#include "analyze/stats.hpp"
#include "core/event_kinds.hpp"
#include "core/gpu_process.hpp"
#include "core/grid_intensity.hpp"
#include "core/health.hpp"
#include "core/metrics.hpp"
#include "core/mig.hpp"
#include "core/vendor.hpp"

namespace gpuscope::analyze {

// One sampled GPU of one run (a merged database holds many runs: one per rank).
struct GpuKey {
  std::int64_t run_id = 0;
  std::string host;
  std::optional<int> rank;
  unsigned device_index = 0;
  std::string uuid;
  std::string name;
  Vendor vendor = Vendor::Nvidia;  // Amd: read through AMD SMI or ROCm SMI (docs/amd.md)
  // Where its saturation metrics came from ("gpm", "dcgm", "exporter"; nullopt: nowhere, or a file
  // older than schema 1.6) and how, or why not (docs/sources.md).
  std::optional<std::string> saturation_source;
  std::optional<std::string> saturation_detail;
  // The run's label (a log's file name): names the GPU's run where the run has no host.
  std::string run_label;
  // A MIG instance (core/mig.hpp): who it is; its device_index is mig_device_index(parent, gi).
  std::optional<MigIdentity> mig;
  // A GPU: whether MIG mode was on (nullopt: it cannot do MIG, or could not say).
  std::optional<bool> mig_enabled;
  // Set where another run of the analysis has the same host (else label) and rank: what tells
  // the two apart in labels (RunMeta::tag).
  std::string run_tag;
  // The host, else the run's label: what tells runs apart in labels.
  const std::string& where() const { return host.empty() ? run_label : host; }
  // "nid0012 rank 3 GPU 1", "node1.csv GPU 1" (a log without a host), "node1 (after.db) GPU 1"
  // (two runs of one host without ranks), or "GPU 1" for a single-run analysis; a MIG instance
  // by its mig_label, "GPU 0 GI 3 (1g.18gb)".
  std::string label(bool with_host) const;
};

struct RunMeta {
  std::int64_t run_id = 0;
  std::string source;  // the database file
  std::string host;
  std::optional<int> rank;
  // The launcher's rank context (docs/launchers.md); absent outside a parallel job.
  std::optional<std::string> launcher;
  std::optional<std::string> job_id;
  std::optional<int> local_rank;
  std::optional<int> world_size;
  std::optional<std::string> node_name;
  std::optional<std::string> pod_name;
  std::optional<std::string> pod_namespace;
  std::string label;
  // Where another run has the same host (else label) and rank: what tells them apart in the
  // GPUs' labels, its file's name, else "run N" (its place among those runs).
  std::string tag;
  std::string command_line;
  std::int64_t start_wall_ns = 0;
  std::int64_t end_wall_ns = 0;  // 0 while running / interrupted
  double sampling_interval_s = 0.1;
  std::string status;
  std::optional<int> exit_code;
  std::optional<std::string> scenario;
  std::optional<std::string> origin;  // where imported samples came from (RunInfo::origin)
  // What the run's data lacks or met, as recorded with it (RunEnd::problems): an import's
  // "the log has no energy counter", a profile's sampling failures.
  std::vector<std::string> problems;
};

// The part of the run the statistics cover, after trimming.
struct Window {
  double start_s = 0;  // seconds since the earliest run start
  double end_s = 0;
  double leading_trimmed_s = 0;
  double trailing_trimmed_s = 0;
  std::string mode;  // "leading", "trailing", "all", "none"
};

struct GpuEnergy {
  std::optional<double> counter_j;  // from the hardware counter (preferred)
  // This GPU's carbon, gCO2e (its energy at the analysis' intensity, or period by period with a
  // grid series), PUE included; absent without energy.
  std::optional<double> carbon_g;
  // With a grid intensity series: the counter's energy in each of the analyzer's carbon slots
  // (the series' periods and the gaps around them), J; empty without a series or a counter.
  std::vector<double> slot_j;
  std::optional<double> integrated_j;  // from integrating power, the cross-check
  std::optional<double> average_power_w;
  std::optional<double> peak_power_w;
  std::optional<double> power_limit_w;
  std::optional<ThrottleTime> throttle;
};

// One metric of one GPU on the analysis' per-GPU grid (Analysis::gpu_grid_bin_s wide bins from
// t = 0): the mean of the GPU's samples in each bin, NaN where it had none. Kept only for the
// metrics AnalysisOptions::gpu_grid_metrics names (the HTML report's per-GPU lines and heatmap).
struct GpuGridSeries {
  Metric metric = Metric::PowerW;
  std::vector<float> mean;
};

struct GpuReport {
  GpuKey key;
  double covered_s = 0;  // time with samples inside the window
  std::array<std::optional<Summary>, kMetricCount> over_time{};
  std::optional<double> activity;  // time-averaged activity (0..1) in the window
  // "sm_active_pct" or "gpu_util_pct" (an AMD GPU's graphics activity: key.vendor says)
  std::string activity_metric;
  std::optional<Summary> score;
  GpuEnergy energy;
  std::size_t samples = 0;
  std::vector<GpuGridSeries> grid;  // empty unless asked for
  // A MIG instance: its ESTIMATED share of its parent's measured power and energy (never in
  // `energy`, which holds what was measured: nothing, for an instance).
  std::optional<MigEstimate> estimated;
  // A MIG-enabled GPU with instances in the analysis: how its measured energy was split.
  std::optional<MigParentSplit> mig_split;
};

// Over both GPUs and time: one line per metric.
struct MetricOverall {
  std::size_t count = 0;
  double mean = 0, median = 0, min = 0, max = 0;
  // The median is exact (the metric took at most ValueCounts::kDefaultLimit distinct values);
  // false: it is the quantile sketch's estimate, within 0.1 %.
  bool median_exact = false;
};

// Over space at one grid point: across GPUs.
struct SpacePoint {
  double t_s = 0;  // bin start, seconds since the earliest run start
  double mean = 0, min = 0, max = 0;
  std::size_t min_gpu = 0, max_gpu = 0;  // indices into Analysis::gpus
  std::size_t gpus = 0;                  // how many GPUs reported in the bin
};

// One period of a grid intensity series with the job's energy in it (all GPUs).
struct CarbonInterval {
  std::int64_t start_wall_ns = 0;
  std::int64_t end_wall_ns = 0;
  double g_per_kwh = 0;
  IntensityKind kind;   // the period's: actual, estimated, forecast, given
  double energy_j = 0;  // the hardware counter's, split at the period's edges
  double grams = 0;     // energy × intensity × PUE
};

struct Carbon {
  double g_per_kwh = 0;  // the intensity applied: with a series, the energy-weighted mean
  std::string source;    // "user (--carbon-intensity)", the table's source and year, the series'
  std::string region;
  double pue = 1;
  double grams = 0;
  std::optional<double> grams_per_unit;
  // With a grid intensity series (--carbon-series, or a grid API): the job's energy in each of
  // its periods, the share of the energy the periods covered (the rest counted at the yearly
  // average named in `fallback_source`), and the yearly-average figure for comparison.
  std::vector<CarbonInterval> intervals;
  std::optional<double> coverage;
  std::optional<double> yearly_grams;
  std::string fallback_source;
  // Where the series reaches past the job: the same energy profile started at the best later
  // period within 24 h (an estimate; analyze/carbon.hpp greener_start).
  std::optional<GreenerStart> greener;
};

struct Finding {
  std::string kind;  // stable key: "idle_start", "straggler", "power_capped", ...
  std::string text;  // one sentence for people, with its number
};

// Something to mark on a timeline: a job event or a captured output line (filled by the caller
// for the HTML report; analyze itself does not need them).
struct Mark {
  double t_s = 0;
  std::string kind;  // the event's kind ("job_start", "signal", ...), or "stdout"/"stderr"
  std::string text;
  std::string where;  // the run (host, rank) or GPU it concerns; empty for a single run
};

// One process's use of one GPU of one run (the processes and process_samples tables).
struct ProcessUse {
  std::int64_t run_id = 0;
  unsigned device_index = 0;
  std::string gpu;  // "GPU 1", or "nid0012 rank 3 GPU 1" in a merged analysis
  GpuProcess process;
  double first_s = 0;  // seen first and last, seconds since the analysis' time zero
  double last_s = 0;
  std::size_t looks = 0;  // how many looks saw it on this GPU
  std::optional<std::uint64_t> peak_memory_bytes;
  std::optional<double> mean_sm_percent;  // where the driver gave per-process utilization
};

// A health event of one GPU (an Xid, ECC errors, a row remap, PCIe replays, NVLink errors;
// docs/health.md), on the analysis' time axis.
struct HealthEvent {
  std::string gpu;  // its label: "GPU 1", "nid0012 rank 3 GPU 1"
  double t_s = 0;
  EventKind kind = EventKind::Other;
  std::string detail;
  std::optional<double> run_end_s;  // when its run ended; absent while it runs or was killed
};

// One GPU's health counters (core/health.hpp) at its first and last health sample.
struct GpuHealth {
  std::string gpu;
  double first_t_s = 0, last_t_s = 0;
  std::array<std::optional<double>, kHealthMetricCount> first{}, last{};
  std::optional<double> run_end_s;

  // How much a counter rose over the run; nullopt where the GPU lacks it.
  std::optional<double> rise(HealthMetric metric) const;
  std::optional<double> at_end(HealthMetric metric) const {
    return last[static_cast<std::size_t>(metric)];
  }
};

struct HealthReport {
  std::vector<HealthEvent> events;  // in time order
  std::vector<GpuHealth> gpus;      // the GPUs with health samples (schema 1.8)
  bool empty() const { return events.empty() && gpus.empty(); }
};

struct LostGpu {
  std::string label;
  double t_s = 0;
};

// A MIG instance gone or appeared, or MIG mode changed, during a run (a `mig_instance` event).
struct MigChange {
  std::string where;  // the host, when several runs are analysed together; else empty
  double t_s = 0;
  std::string detail;  // as the sampler worded it, naming the instance or GPU
};

struct Analysis {
  std::vector<RunMeta> runs;
  std::vector<std::string> inputs;
  std::int64_t t0_wall_ns = 0;
  double duration_s = 0;
  Window window;
  double resolution_s = 0;
  std::vector<GpuReport> gpus;
  std::array<std::optional<MetricOverall>, kMetricCount> over_both{};
  std::array<std::vector<SpacePoint>, kMetricCount> over_space{};
  double gpu_grid_bin_s = 0;  // width of the bins of GpuReport::grid (0 when none kept)
  std::size_t gpu_grid_bins = 0;
  std::vector<Mark> marks;
  std::optional<MetricOverall> score;
  // Over whole GPUs (not in MIG mode, or in MIG mode without instances in the analysis).
  std::optional<Balance> balance;
  // Over MIG instances, each one's activity as a fraction of its own instance (indices into gpus).
  std::optional<Balance> mig_balance;
  std::optional<double> energy_counter_j;
  std::optional<double> energy_integrated_j;
  std::optional<double> work_units;
  std::string work_name = "units";
  std::optional<double> energy_per_unit_j;
  std::optional<Carbon> carbon;
  // The node's CPU and memory energy beside the GPUs', and the total (schema 1.10; none when no
  // run recorded any; analyze/node_energy.hpp).
  std::optional<NodeEnergy> node_energy;
  std::vector<LostGpu> lost_gpus;
  std::vector<MigChange> mig_changes;  // in time order
  HealthReport health;
  std::vector<ProcessUse> processes;  // empty when the runs recorded none (or before 1.3)
  std::optional<PhaseReport> phases;  // when the runs hold phases (schema 1.5)
  std::vector<Finding> findings;
  std::vector<std::string> notes;  // what could not be computed, and why
};

// Whether a metric is summarised as a level (gauges): counters and bitmasks are not.
bool summarised(Metric metric);

}  // namespace gpuscope::analyze
