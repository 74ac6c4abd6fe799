#include "analyze/analyzer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "analyze/carbon.hpp"
#include "analyze/device_figures.hpp"
#include "analyze/findings.hpp"
#include "analyze/gpu_grid.hpp"
#include "analyze/mig_instances.hpp"
#include "core/error.hpp"

namespace gpuscope::analyze {
namespace {

// Differences of two int64 nanosecond stamps from a file cannot overflow in 128 bits.
__extension__ typedef __int128 WideInt;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kMaxSpaceBins = 2000;

// Across GPUs, per grid bin: the mean of GPU means, and which GPU was lowest and highest.
struct SpaceBins {
  std::vector<double> sum, min, max;
  std::vector<std::uint32_t> gpus, min_gpu, max_gpu;
  void resize(std::size_t n) {
    sum.assign(n, 0);
    min.assign(n, 0);
    max.assign(n, 0);
    gpus.assign(n, 0);
    min_gpu.assign(n, 0);
    max_gpu.assign(n, 0);
  }
  void add(std::size_t bin, double value, std::uint32_t gpu) {
    if (gpus[bin] == 0 || value < min[bin]) {
      min[bin] = value;
      min_gpu[bin] = gpu;
    }
    if (gpus[bin] == 0 || value > max[bin]) {
      max[bin] = value;
      max_gpu[bin] = gpu;
    }
    sum[bin] += value;
    ++gpus[bin];
  }
};

}  // namespace

std::string GpuKey::label(bool with_host) const {
  std::string text;
  if (with_host) {
    text = where();
    if (!run_tag.empty()) text += fmt::format(" ({})", run_tag);
    if (rank) text += fmt::format(" rank {}", *rank);
    text += " ";
  }
  if (mig) return text + mig_label(*mig);
  return text + fmt::format("GPU {}", device_index);
}

bool summarised(Metric metric) {
  const auto& m = info(metric);
  return m.kind == MetricKind::Gauge;
}

double sample_activity(double sm_active_pct, double gpu_util_pct) {
  if (!std::isnan(sm_active_pct)) return sm_active_pct / 100.0;
  if (!std::isnan(gpu_util_pct)) return gpu_util_pct / 100.0;
  return kNaN;
}

void DeviceSeries::clear() {
  t_s.clear();
  for (auto& v : values) v.clear();
  power_t_s.clear();
  power_w.clear();
  power_energy_mj.clear();
}

struct Analyzer::State {
  AnalysisOptions options;
  Analysis result;
  double base_bin_s = 0.1;
  BinnedMean activity;
  double max_t_s = 0;
  std::size_t max_gpu_samples = 0;  // the most samples one GPU gave in pass 1
  std::vector<Finding> data_findings;
  bool activity_done = false;
  SpaceBins space[kMetricCount];
  double space_bin_s = 0.1;
  std::size_t space_count = 0;
  std::array<OverallPart, kMetricCount> overall;
  OverallPart score;
  // Whether overall[m] (score) stopped counting distinct values: the worker threads then skip
  // counting them in each GPU's part (the merged result is the same).
  std::array<std::atomic<bool>, kMetricCount> counts_given_up{};
  std::atomic<bool> score_counts_given_up{false};
  CarbonSlots carbon_slots;  // with a grid series: its periods on the analysis' time axis
  std::optional<PhaseAnalysis> phases;
  std::vector<std::pair<std::size_t, MigBins>> mig_bins;  // (GPU, its bins) of MIG GPUs
};

Analyzer::Analyzer(AnalysisOptions options, std::vector<RunMeta> runs)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.options = std::move(options);
  s.result.runs = std::move(runs);
  s.result.work_name = s.options.work_name;
  std::int64_t t0 = std::numeric_limits<std::int64_t>::max();
  double interval = 0;
  for (const auto& run : s.result.runs) {
    t0 = std::min(t0, run.start_wall_ns);
    interval = std::max(interval, run.sampling_interval_s);
  }
  s.result.t0_wall_ns = s.result.runs.empty() ? 0 : t0;
  if (s.options.grid_series) {
    s.carbon_slots = carbon_slots(*s.options.grid_series, s.result.runs, s.result.t0_wall_ns);
  }
  // The trimming grid: the sampling interval, at least 50 ms (a 24 h run stays < 2 M bins).
  s.base_bin_s = std::max(interval, 0.05);
  s.activity.width = s.base_bin_s;
}

Analyzer::~Analyzer() = default;

std::int64_t Analyzer::t0_wall_ns() const {
  return state_->result.t0_wall_ns;
}

double Analyzer::t0_offset_s(const RunMeta& run) const {
  // In 128 bits: a file may hold any int64 as a start time, and the difference of two must
  // not overflow.
  return static_cast<double>(static_cast<WideInt>(run.start_wall_ns) -
                             static_cast<WideInt>(state_->result.t0_wall_ns)) /
         1e9;
}

void Analyzer::add_activity(std::span<const double> t_s, std::span<const double> activity) {
  State& s = *state_;
  std::size_t samples = 0;
  for (std::size_t i = 0; i < t_s.size() && i < activity.size(); ++i) {
    if (!(t_s[i] >= 0) || !std::isfinite(t_s[i])) continue;
    ++samples;
    s.max_t_s = std::max(s.max_t_s, t_s[i]);
    s.activity.add(t_s[i], activity[i]);
  }
  s.max_gpu_samples = std::max(s.max_gpu_samples, samples);
}

ActivityPart Analyzer::activity_part() const {
  const State& s = *state_;
  return {s.activity.width, s.activity.sum, s.activity.count, s.max_t_s, s.max_gpu_samples};
}

void Analyzer::add_activity_part(const ActivityPart& part) {
  State& s = *state_;
  if (!(part.width > 0) || part.sum.size() != part.count.size()) {
    throw Error("a partial summary's activity bins are damaged", {},
                "run the partial step again into an empty directory");
  }
  s.activity.merge({part.width, part.sum, part.count});
  s.max_t_s = std::max(s.max_t_s, part.max_t_s);
  s.max_gpu_samples = std::max(s.max_gpu_samples, part.max_gpu_samples);
}

void Analyzer::add_overall_counts(const OverallCounts& counts) {
  State& s = *state_;
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    s.overall[m].sketch.merge(counts.sketch[m]);
    s.overall[m].values.merge(counts.values[m]);
  }
  s.score.sketch.merge(counts.score_sketch);
  s.score.values.merge(counts.score_values);
}

void Analyzer::note_data_problem(std::string kind, std::string finding, std::string note) {
  State& s = *state_;
  s.data_findings.push_back({std::move(kind), std::move(finding)});
  if (!note.empty()) s.result.notes.push_back(std::move(note));
}

void Analyzer::finish_activity() {
  State& s = *state_;
  const std::vector<double> means = s.activity.means();
  const double activity_bin_s = s.activity.width;
  const TrimResult trim = detect_idle(means, activity_bin_s, s.options.trim);
  Window& w = s.result.window;
  w.start_s = static_cast<double>(trim.begin) * activity_bin_s;
  w.end_s = trim.end >= means.size() ? s.max_t_s + activity_bin_s
                                     : static_cast<double>(trim.end) * activity_bin_s;
  w.leading_trimmed_s = trim.leading_s;
  w.trailing_trimmed_s = trim.trailing_s;
  switch (s.options.trim) {
    case TrimMode::Leading:
      w.mode = "leading";
      break;
    case TrimMode::Trailing:
      w.mode = "trailing";
      break;
    case TrimMode::All:
      w.mode = "all";
      break;
    case TrimMode::None:
      w.mode = "none";
      break;
  }
  s.result.duration_s = s.max_t_s;
  if (activity_bin_s > s.base_bin_s) {
    s.result.notes.push_back(fmt::format(
        "the samples span {:.0f} s, too long for idle detection at {:g} s; it used bins of {:g} s",
        s.max_t_s, s.base_bin_s, activity_bin_s));
  }

  // The over-space grid: by default at most kMaxSpaceBins bins; a --resolution finer than the
  // samples can fill is coarsened to at most two bins per sample of the longest GPU series, so
  // the grid is sized by the samples, not by the time span they claim to cover.
  double bin = s.options.resolution_s > 0 ? s.options.resolution_s : s.base_bin_s;
  const double span = s.max_t_s + s.base_bin_s;
  if (s.options.resolution_s <= 0 && span / bin > static_cast<double>(kMaxSpaceBins)) {
    bin = std::ceil(span / static_cast<double>(kMaxSpaceBins) / s.base_bin_s) * s.base_bin_s;
  }
  const auto max_bins =
      static_cast<double>(std::max<std::size_t>(kMaxSpaceBins, 2 * s.max_gpu_samples));
  if (span / bin > max_bins) {
    const double wanted = bin;
    bin = span / max_bins;
    s.result.notes.push_back(fmt::format(
        "--resolution {:g} s would need {:.0f} time bins for {} samples per GPU; used {:g} s",
        wanted, span / wanted, s.max_gpu_samples, bin));
  }
  s.space_bin_s = bin;
  s.space_count = static_cast<std::size_t>(std::ceil(span / bin)) + 1;
  s.result.resolution_s = bin;
  if (!s.options.gpu_grid_metrics.empty()) {
    s.result.gpu_grid_bin_s = gpu_grid_bin_width(span, bin, s.options.gpu_grid_bins);
    s.result.gpu_grid_bins = static_cast<std::size_t>(std::ceil(span / s.result.gpu_grid_bin_s));
  }
  s.activity = {};
  s.activity_done = true;
}

const Window& Analyzer::window() const {
  return state_->result.window;
}

void Analyzer::add_device(const DeviceSeries& d) {
  add_prepared(prepare_device(d));
}

PreparedDevice Analyzer::prepare_device(const DeviceSeries& d) const {
  const State& s = *state_;
  const Window& w = s.result.window;
  PreparedDevice out;
  GpuReport& report = out.report;
  report.key = d.key;

  const WindowSpan span = window_span(d.t_s, w);  // the samples inside the window
  report.samples = span.any ? span.last - span.first + 1 : 0;
  report.covered_s = span.any ? d.t_s[span.last] - d.t_s[span.first] + d.sampling_interval_s : 0;

  // The samples' over-space bins, computed once for every metric.
  thread_local std::vector<BinStretch> stretches;
  thread_local std::vector<double> sorted;
  bin_stretches(d.t_s, s.space_bin_s, s.space_count, stretches);
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    if (s.counts_given_up[m].load(std::memory_order_relaxed)) out.overall[m].values.give_up();
  }
  if (s.score_counts_given_up.load(std::memory_order_relaxed)) out.score.values.give_up();
  summarise_metrics(d, span, stretches, s.space_count, out, sorted);
  activity_and_score(d, span, out, sorted);
  device_energy(d, span, s.carbon_slots.edges_s, report.energy);
  for (Metric m : s.options.gpu_grid_metrics) {
    report.grid.push_back(
        {m, gpu_grid_means(d.t_s, d.of(m), s.result.gpu_grid_bin_s, s.result.gpu_grid_bins)});
  }
  if (s.phases)
    out.phases = s.phases->measure(d, static_cast<std::size_t>(d.key.run_id), d.key.device_index);
  if (d.key.mig || d.key.mig_enabled.value_or(false)) {
    out.mig_bins = mig_bins_of(d, s.space_bin_s, s.space_count);
  }
  // It waits in the merge queue: the sketches without their room to grow.
  for (auto& part : out.overall) part.sketch.compact();
  out.score.sketch.compact();
  return out;
}

void Analyzer::set_phases(std::vector<std::string> names, std::vector<PhaseSpan> spans) {
  if (spans.empty()) {
    state_->phases.reset();
    return;
  }
  state_->phases.emplace(std::move(names), std::move(spans));
}

void Analyzer::add_prepared(PreparedDevice&& d) {
  State& s = *state_;
  const auto gpu = static_cast<std::uint32_t>(s.result.gpus.size());
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    if (!in_overall(d.report.key, static_cast<Metric>(m))) continue;
    s.overall[m].merge(d.overall[m]);
    if (!s.overall[m].values.exact()) s.counts_given_up[m].store(true, std::memory_order_relaxed);
    // Allocated on first use: a metric no GPU reports costs no grid.
    if (!d.space[m].empty() && s.space[m].gpus.empty()) s.space[m].resize(s.space_count);
    for (const auto& [bin, mean] : d.space[m]) s.space[m].add(bin, mean, gpu);
  }
  s.score.merge(d.score);
  if (!s.score.values.exact()) s.score_counts_given_up.store(true, std::memory_order_relaxed);
  if (s.phases) {
    d.phases.gpu = gpu;
    s.phases->add(d.phases);
  }
  if (!d.mig_bins.energy_j.empty() || !d.mig_bins.present.empty()) {
    s.mig_bins.emplace_back(s.result.gpus.size(), std::move(d.mig_bins));
  }
  s.result.gpus.push_back(std::move(d.report));
}

void Analyzer::note_gpu_lost(const GpuKey& key, double t_s, bool with_host) {
  state_->result.lost_gpus.push_back({key.label(with_host), t_s});
}

void Analyzer::note_mig_change(const GpuKey& key, double t_s, std::string detail, bool with_host) {
  state_->result.mig_changes.push_back({with_host ? key.host : "", t_s, std::move(detail)});
}

void Analyzer::note_health_event(const GpuKey& key, HealthEvent event, bool with_host) {
  event.gpu = key.label(with_host);
  state_->result.health.events.push_back(std::move(event));
}

void Analyzer::add_health(const GpuKey& key, GpuHealth health, bool with_host) {
  health.gpu = key.label(with_host);
  state_->result.health.gpus.push_back(std::move(health));
}

namespace {

// The figures over all GPUs and over space (per grid bin: the mean of the GPUs' means, the
// lowest and highest GPU), and the efficiency score's.
void overall_figures(const std::array<OverallPart, kMetricCount>& overall,
                     const SpaceBins (&space)[kMetricCount], double space_bin_s,
                     const OverallPart& score, Analysis& a) {
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    a.over_both[m] = overall[m].result();
    const SpaceBins& bins = space[m];
    for (std::size_t b = 0; b < bins.gpus.size(); ++b) {
      if (bins.gpus[b] == 0) continue;
      a.over_space[m].push_back({static_cast<double>(b) * space_bin_s, bins.sum[b] / bins.gpus[b],
                                 bins.min[b], bins.max[b], bins.min_gpu[b], bins.max_gpu[b],
                                 bins.gpus[b]});
    }
  }
  a.score = score.result();
}

// Totals, counting a GPU only where its figure exists (and saying so otherwise). MIG instances
// measure no energy of their own: their estimates are never summed. The job's energy: the
// counters' total, else integrated power's.
std::optional<double> energy_totals(Analysis& a) {
  double counter = 0, integrated = 0;
  std::size_t with_counter = 0, with_integrated = 0, instances = 0;
  for (const auto& g : a.gpus) {
    if (g.key.mig) ++instances;
    if (g.energy.counter_j) {
      counter += *g.energy.counter_j;
      ++with_counter;
    }
    if (g.energy.integrated_j) {
      integrated += *g.energy.integrated_j;
      ++with_integrated;
    }
  }
  if (with_counter > 0) a.energy_counter_j = counter;
  if (with_integrated > 0) a.energy_integrated_j = integrated;
  if (with_counter > 0 && with_counter < a.gpus.size() - instances) {
    a.notes.push_back(
        fmt::format("the energy counter was read on {} of {} GPUs; the total covers "
                    "those only",
                    with_counter, a.gpus.size() - instances));
  }
  if (instances > 0) {
    a.notes.push_back(fmt::format(
        "{} MIG instance{}: power, energy, temperature and clocks are the parent GPU's (not "
        "measured per instance; the energy and power shown for an instance are estimates, "
        "docs/analysis.md \"MIG instances\"); NVML gives no utilization rates in MIG mode",
        instances, instances == 1 ? "" : "s"));
  }
  return a.energy_counter_j ? a.energy_counter_j : a.energy_integrated_j;
}

// The work done, and the energy per unit of it.
void work_figures(std::optional<double> work_units, std::optional<double> energy, Analysis& a) {
  a.work_units = work_units;
  if (energy && a.work_units && *a.work_units > 0) a.energy_per_unit_j = *energy / *a.work_units;
}

// MIG changes and health events in time order (stable: events at one time keep their order).
void order_events(Analysis& a) {
  std::stable_sort(a.mig_changes.begin(), a.mig_changes.end(),
                   [](const MigChange& x, const MigChange& y) { return x.t_s < y.t_s; });
  std::stable_sort(a.health.events.begin(), a.health.events.end(),
                   [](const HealthEvent& x, const HealthEvent& y) { return x.t_s < y.t_s; });
}

// The findings: the data's problems first, then the diagnosis, then the carbon findings (a
// greener start), which are all `a.findings` holds so far.
void order_findings(std::vector<Finding> data_findings, Analysis& a) {
  std::vector<Finding> carbon_findings = std::move(a.findings);
  a.findings = std::move(data_findings);
  for (auto& f : diagnose(a)) a.findings.push_back(std::move(f));
  for (auto& f : carbon_findings) a.findings.push_back(std::move(f));
}

}  // namespace

Analysis Analyzer::finish() {
  State& s = *state_;
  Analysis& a = s.result;
  overall_figures(s.overall, s.space, s.space_bin_s, s.score, a);
  // Load balance over the GPUs that reported activity, MIG instances among themselves; the
  // instances' estimated shares of their parents' energy.
  balance_with_instances(a, s.options.straggler_threshold);
  estimate_mig_shares(a, s.mig_bins);
  s.mig_bins.clear();
  const std::optional<double> energy = energy_totals(a);
  work_figures(s.options.work_units, energy, a);
  if (energy) a.carbon = analysis_carbon(s.options, s.carbon_slots, *energy, a);
  if (s.phases) {
    a.phases = s.phases->finish(energy, a.work_units, a.gpus.size(), s.options.max_phase_instances);
  }
  order_events(a);
  order_findings(std::move(s.data_findings), a);
  return std::move(a);
}

}  // namespace gpuscope::analyze
