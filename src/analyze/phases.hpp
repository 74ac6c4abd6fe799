// Energy, time and saturation per phase (docs/phases.md, "What analyze computes"): every phase
// instance (an NVTX range, a marked phase, an output-defined phase) is measured on each GPU it
// belongs to, with the hardware energy counter interpolated at its edges and the saturation
// metrics averaged over its time; instances are then summed per name. Nested phases (a forward
// inside a step) get inclusive figures and exclusive ones (their own time and energy, without
// what their children cover).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/metrics.hpp"
#include "core/phase.hpp"

namespace gpuscope::analyze {

struct DeviceSeries;

// A phase on the analysis' time axis (seconds since its t0).
struct PhaseSpan {
  std::uint32_t name = 0;  // index into the analysis' phase names
  std::string instance;
  PhaseSource source = PhaseSource::Mark;
  std::size_t run = 0;                   // which analysed run (GpuKey::run_id)
  std::optional<unsigned> device_index;  // the GPU of that run; none: every GPU of the run
  std::uint64_t track = 0;  // phases nest only within a track (a thread, a process, a source)
  double start_s = 0;
  double end_s = 0;
  bool point = false;
  bool closed = true;
};

// The saturation metrics measured per phase, in this order.
inline constexpr std::array<Metric, 3> kPhaseMetrics = {
    Metric::SmActivePct, Metric::TensorActivePct, Metric::DramActivePct};

// Figures of one instance, or of every instance of a name, over the GPUs they belong to.
struct PhaseFigures {
  double time_s = 0;  // inclusive wall time (for a name: the sum over instances)
  double exclusive_time_s = 0;
  std::optional<double> energy_j;  // summed over the GPUs; none when no GPU measured energy
  std::optional<double> exclusive_energy_j;
  std::optional<double> mean_power_w;  // energy / time (all its GPUs together)
  // Time-weighted means over the phase and its GPUs (%), in kPhaseMetrics' order.
  std::array<std::optional<double>, kPhaseMetrics.size()> metrics{};
  std::optional<double> energy_share;  // of the job's energy (0..1)
};

struct PhaseInstance {
  std::size_t span = 0;  // index into the spans given
  std::string name;
  std::string instance;
  std::string source;
  std::size_t run = 0;
  double start_s = 0;
  double end_s = 0;
  bool closed = true;
  int depth = 0;  // nesting depth within its track (0: outermost)
  PhaseFigures figures;
};

struct PhaseName {
  std::string name;
  std::string source;
  std::size_t count = 0;   // ranges (points are counted in `points`)
  std::size_t points = 0;  // instants with this name
  std::size_t unclosed = 0;
  double mean_time_s = 0, min_time_s = 0, max_time_s = 0, median_time_s = 0;
  double time_cv = 0;                   // standard deviation / mean of the instances' times
  PhaseFigures total;                   // summed over its instances (metrics: time-weighted means)
  std::optional<double> mean_energy_j;  // per instance
  std::optional<double> energy_per_unit_j;          // total energy / the job's work units
  std::vector<std::optional<double>> gpu_energy_j;  // per analysed GPU (Analysis::gpus order)
  // Runs of consecutive instances (in start order) that took over kSlowFactor × the median:
  // (first, last) by their instance label, or their 1-based position when they have none; the
  // longest first, at most three.
  std::vector<std::pair<std::string, std::string>> slow_stretches;
};

// How much longer than the median an instance must take to count as slow.
inline constexpr double kSlowFactor = 1.15;

// Every phase instance in time bins, a row per nesting depth (the deepest rows merged into the
// last): what the report draws when there are more instances than it lists one by one.
struct PhaseBins {
  double bin_s = 0;
  std::size_t bins = 0;
  std::vector<std::vector<double>> busy_s;              // [row][bin]: phase time inside the bin
  std::vector<std::vector<std::uint32_t>> started;      // instances starting in the bin
  std::vector<std::vector<std::int32_t>> longest_name;  // of those, the longest's name (-1: none)
  std::vector<std::vector<double>> longest_s;
};
inline constexpr std::size_t kPhaseBins = 2000;
inline constexpr std::size_t kPhaseBinRows = 6;

struct PhaseReport {
  std::vector<PhaseName> names;          // the most energy first
  std::vector<std::string> span_names;   // every name, by PhaseSpan::name (PhaseBins' names)
  std::optional<PhaseBins> bins;         // when instance_count > instances.size()
  std::vector<PhaseInstance> instances;  // in start order; at most max_instances
  std::size_t instance_count = 0;        // all of them
  std::size_t point_count = 0;
  double covered_time_s = 0;  // time inside at least one phase (any track)
};

// Lays out the spans: the nesting within each track (by containment: a span inside another of
// its track is its child; overlapping ones that do not contain each other are siblings).
struct PhaseLayout {
  std::vector<std::int64_t> parent;  // -1: outermost
  std::vector<int> depth;
  // For each span, the disjoint intervals its children cover: cover[cover_begin[i] ..
  // cover_begin[i + 1]).
  std::vector<std::size_t> cover_begin;
  std::vector<std::pair<double, double>> cover;
};
PhaseLayout layout_phases(std::span<const PhaseSpan> spans);

// One GPU's series as cumulative sums, so that any interval is measured in O(log n): the energy
// counter (its increases; a reset's interval counts nothing), power integrated where there is no
// counter, and each phase metric's integral and covered time (samples hold until the next one,
// at most max_gap).
class IntervalMeter {
 public:
  explicit IntervalMeter(const DeviceSeries& series);
  bool has_energy() const { return !energy_t_.empty(); }
  // Energy in [a, b] (J); nullopt without readings. Edges outside the readings are clamped.
  std::optional<double> energy_j(double a, double b) const;
  // (integral in %·s, covered seconds) of metric m (index into kPhaseMetrics) over [a, b].
  std::pair<double, double> metric(std::size_t m, double a, double b) const;

 private:
  std::vector<double> energy_t_, energy_cum_j_;
  std::vector<double> metric_t_;  // the sample times
  // Per metric, at each sample time: the integral and covered time from the first sample.
  std::array<std::vector<double>, kPhaseMetrics.size()> integral_, covered_;
  std::array<std::vector<double>, kPhaseMetrics.size()> value_;  // NaN: not measured
  double max_gap_s_ = 1;
  double last_hold_s_ = 0.1;  // how long the last sample holds
};

// What one GPU measured of the phases that belong to it.
struct PhaseGpuPart {
  std::size_t gpu = 0;  // position in Analysis::gpus (set by the caller)
  std::vector<std::uint32_t> spans;
  std::vector<double> energy_j;  // NaN: unknown
  std::vector<double> exclusive_energy_j;
  std::vector<std::array<double, kPhaseMetrics.size()>> integral, covered;
};

class PhaseAnalysis {
 public:
  PhaseAnalysis(std::vector<std::string> names, std::vector<PhaseSpan> spans);
  bool empty() const { return spans_.empty(); }

  // Measures the spans of GPU `device_index` of run `run` (any thread; reads only).
  PhaseGpuPart measure(const DeviceSeries& series, std::size_t run, unsigned device_index) const;
  // Adds a GPU's part (one thread, any order).
  void add(const PhaseGpuPart& part);
  // The report: `job_energy_j` for shares, `work_units` for energy per unit, `gpu_count` GPUs.
  PhaseReport finish(std::optional<double> job_energy_j, std::optional<double> work_units,
                     std::size_t gpu_count, std::size_t max_instances) const;

 private:
  std::vector<std::string> names_;
  std::vector<PhaseSpan> spans_;
  PhaseLayout layout_;
  std::vector<std::vector<std::uint32_t>> by_run_;  // range spans of each run

  PhaseBins bin_phases() const;
  // Span i's figures summed over its GPUs (its share of `job_energy_j`, when that is above 0).
  PhaseFigures instance_figures(std::size_t i, std::optional<double> job_energy_j) const;
  // Span i as the report lists it, with its `figures`.
  PhaseInstance instance_of(std::size_t i, const PhaseFigures& figures) const;
  std::vector<std::pair<std::string, std::string>> slow_stretches(
      const std::vector<double>& times, const std::vector<std::size_t>& spans, double median) const;
  // Per span, summed over its GPUs.
  std::vector<double> energy_j_, exclusive_energy_j_;
  std::vector<std::uint8_t> energy_known_;
  std::vector<std::array<double, kPhaseMetrics.size()>> integral_, covered_;
  // Per name and GPU position: energy.
  std::vector<std::vector<double>> name_gpu_energy_;
};

}  // namespace gpuscope::analyze
