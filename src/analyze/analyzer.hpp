// The analysis engine, fed one GPU at a time so memory stays bounded whatever the run size:
//   pass 1: add_activity() per GPU (a few columns) → finish_activity() finds the idle edges;
//   pass 2: add_device() per GPU (every metric) → finish() builds the Analysis.
// It knows nothing of databases: cli/ reads the run database and feeds it; tests feed it by hand.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analyze/activity_bins.hpp"
#include "analyze/analysis.hpp"
#include "analyze/overall.hpp"
#include "analyze/trimming.hpp"

namespace gpuscope::analyze {

struct AnalysisOptions {
  TrimMode trim = TrimMode::Leading;
  double resolution_s = 0;  // over-space grid; 0: the sampling interval, coarsened to ≤ 2000 bins
  double straggler_threshold = 0.15;
  std::optional<double> carbon_g_per_kwh;  // --carbon-intensity
  std::optional<std::string> region;       // --region
  // A grid intensity series (--carbon-series, a grid API): carbon is then the energy of each of
  // its periods times that period's intensity; energy outside them counts at the yearly average.
  std::optional<IntensitySeries> grid_series;
  double pue = 1.0;
  std::optional<double> work_units;  // --work-units, or the sum of --work-regex matches
  std::string work_name = "units";
  // Per-GPU series to keep (GpuReport::grid), averaged on a grid of at most gpu_grid_bins bins
  // across the run; none by default, so analyze's memory does not grow with the GPU count.
  std::vector<Metric> gpu_grid_metrics;
  std::size_t gpu_grid_bins = 300;
  std::size_t max_phase_instances = 10000;  // phase instances listed one by one
};

// One GPU's samples in time order: t_s in seconds since the analysis' t0 (the earliest run
// start); values[m][i] is metric m at t_s[i], NaN when absent.
struct DeviceSeries {
  GpuKey key;
  double sampling_interval_s = 0.1;
  std::vector<double> t_s;
  std::array<std::vector<double>, kMetricCount> values;
  // The fast power cadence, when recorded (--power-sampling-ms): used to integrate power and,
  // where it also read the energy counter, for the counter's energy over the same span.
  std::vector<double> power_t_s;
  std::vector<double> power_w;
  std::vector<double> power_energy_mj;  // NaN where a power sample has no counter reading

  void clear();
  const std::vector<double>& of(Metric m) const { return values[static_cast<std::size_t>(m)]; }
};

// What one GPU adds to the analysis (pass 2), computed by Analyzer::prepare_device() on any
// thread and added by Analyzer::add_prepared() in GPU order.
struct PreparedDevice {
  GpuReport report;
  std::array<OverallPart, kMetricCount> overall;
  OverallPart score;
  // Per summarised metric: (over-space bin, the GPU's mean in it), in time order.
  std::array<std::vector<std::pair<std::size_t, double>>, kMetricCount> space;
  PhaseGpuPart phases;  // what this GPU measured of the phases
  MigBins mig_bins;     // a MIG instance's or MIG-enabled GPU's, for the split of its energy
};

class Analyzer {
 public:
  // `runs` are the runs analysed together; the time axis starts at the earliest start.
  Analyzer(AnalysisOptions options, std::vector<RunMeta> runs);
  ~Analyzer();

  double t0_offset_s(const RunMeta& run) const;  // where `run` starts on the analysis axis
  std::int64_t t0_wall_ns() const;

  // The runs' phases (docs/phases.md): their names, and the spans on the analysis' time axis
  // (seconds since t0; span.run is GpuKey::run_id). Before pass 2.
  void set_phases(std::vector<std::string> names, std::vector<PhaseSpan> spans);

  // Pass 1: one GPU's activity (0..1, NaN unknown) at times t_s.
  void add_activity(std::span<const double> t_s, std::span<const double> activity);
  // Pass 1 gathered apart (a distributed analysis): what add_activity() gathered so far, and
  // another analyzer's, added exactly (the same state as one analyzer fed every GPU).
  ActivityPart activity_part() const;
  void add_activity_part(const ActivityPart& part);
  // Ends pass 1: decides the window the statistics cover.
  void finish_activity();
  const Window& window() const;

  // Pass 2: one GPU's full series (after finish_activity()); GPUs are numbered in the order they
  // are added. Equivalent to add_prepared(prepare_device(series)).
  void add_device(const DeviceSeries& series);
  // Pass 2 in two steps, so GPUs can be worked on in parallel: prepare_device() only reads the
  // analyzer (safe on several threads at once, after finish_activity()); add_prepared() must be
  // called on one thread, in GPU order.
  PreparedDevice prepare_device(const DeviceSeries& series) const;
  void add_prepared(PreparedDevice&& device);
  // The sketches and counts taken out of prepared devices (OverallCounts::take) before they were
  // added: after add_prepared() of those devices, in any grouping.
  void add_overall_counts(const OverallCounts& counts);

  // Something wrong with the data itself (a clock step, timestamps outside the run, unreadable
  // parts of a file): `finding` becomes a diagnosis line of `kind` (listed first), `note`, when
  // not empty, a note on what the analysis did about it.
  void note_data_problem(std::string kind, std::string finding, std::string note = {});

  // A GPU fell off the bus at t_s (from the run's events).
  void note_gpu_lost(const GpuKey& key, double t_s, bool with_host);
  // A `mig_instance` event: an instance gone or appeared, or MIG mode changed.
  void note_mig_change(const GpuKey& key, double t_s, std::string detail, bool with_host);
  // The GPUs' health (docs/health.md): an Xid, ECC, row-remap, PCIe-replay or NVLink event, and
  // a GPU's health counters at its first and last health sample (labels filled in here).
  void note_health_event(const GpuKey& key, HealthEvent event, bool with_host);
  void add_health(const GpuKey& key, GpuHealth health, bool with_host);

  // Everything else: load balance, totals, carbon, findings.
  Analysis finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The activity of a sample, 0..1: SM active when GPM offered it, else GPU utilization.
double sample_activity(double sm_active_pct, double gpu_util_pct);

}  // namespace gpuscope::analyze
