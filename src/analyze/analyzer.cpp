#include "analyze/analyzer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "analyze/carbon.hpp"
#include "analyze/findings.hpp"
#include "analyze/gpu_grid.hpp"
#include "analyze/mig_instances.hpp"
#include "analyze/score.hpp"
#include "core/error.hpp"
#include "util/utc_time.hpp"

namespace gpuscope::analyze {
namespace {

// Differences of two int64 nanosecond stamps from a file cannot overflow in 128 bits.
__extension__ typedef __int128 WideInt;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kMaxSpaceBins = 2000;

// Sum and count per time bin, growing as later times arrive, but never past kMaxActivityBins:
// a time beyond that doubles the bin width (merging neighbouring bins, which keeps every sum and
// count exact) until it fits. So memory is bounded whatever the timestamps say: a sample a year
// or a century after the others (a corrupted file, a clock step the reader could not undo)
// coarsens the grid instead of allocating in proportion to the span. The sums are exact (each
// value in fixed point, ActivityPart), so parts summed apart add up to the same bits in any order.
constexpr std::size_t kMaxActivityBins = std::size_t{1} << 21;  // 29 h at 50 ms, 40 MB

struct BinnedMean {
  double width = 0.1;
  std::vector<ActivitySum> sum;
  std::vector<std::uint32_t> count;
  void add(double t_s, double value) {
    if (std::isnan(value) || !(t_s >= 0) || !std::isfinite(t_s)) return;
    while (t_s / width >= static_cast<double>(kMaxActivityBins)) coarsen();
    const auto bin = static_cast<std::size_t>(t_s / width);
    grow(bin + 1);
    sum[bin] += ActivityPart::fixed(value);
    ++count[bin];
  }
  // Adds bins gathered apart from the same base width: the finer of the two is coarsened to the
  // other's width first, which gives the bins one pass over all the samples would have.
  void merge(BinnedMean other) {
    while (width < other.width) coarsen();
    while (other.width < width) other.coarsen();
    grow(other.sum.size());
    for (std::size_t i = 0; i < other.sum.size(); ++i) {
      sum[i] += other.sum[i];
      count[i] += other.count[i];
    }
  }
  void grow(std::size_t n) {
    if (n <= sum.size()) return;
    sum.resize(n, 0);
    count.resize(n, 0);
  }
  void coarsen() {
    const std::size_t n = (sum.size() + 1) / 2;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t a = 2 * i, b = 2 * i + 1;
      sum[i] = sum[a] + (b < sum.size() ? sum[b] : 0);
      count[i] = count[a] + (b < count.size() ? count[b] : 0U);
    }
    sum.resize(n);
    count.resize(n);
    width *= 2;
  }
  std::vector<double> means() const {
    std::vector<double> out(sum.size(), kNaN);
    for (std::size_t i = 0; i < sum.size(); ++i) {
      if (count[i] > 0) out[i] = ActivityPart::value(sum[i]) / count[i];
    }
    return out;
  }
};

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

double last_value(const std::vector<double>& v) {
  for (auto it = v.rbegin(); it != v.rend(); ++it) {
    if (!std::isnan(*it)) return *it;
  }
  return kNaN;
}

double max_value(const std::vector<double>& v) {
  double best = kNaN;
  for (double x : v) {
    if (!std::isnan(x) && (std::isnan(best) || x > best)) best = x;
  }
  return best;
}

std::optional<double> finite(double v) {
  return std::isnan(v) ? std::nullopt : std::optional(v);
}

}  // namespace

std::string GpuKey::label(bool with_host) const {
  std::string text;
  if (with_host) {
    text = where();
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
  // With a grid series: the carbon slots on the analysis' time axis (seconds since t0), each
  // the index of its period in options.grid_series, or -1 for a gap (before, between, after).
  std::vector<double> slot_edges_s;  // slots + 1 edges
  std::vector<std::ptrdiff_t> slot_period;
  std::optional<PhaseAnalysis> phases;
  std::vector<std::pair<std::size_t, MigBins>> mig_bins;  // (GPU, its bins) of MIG GPUs
};

namespace {

// Neumaier summation: the part sums differ in size, so keep what each addition rounds away.
void add_compensated(double& sum, double& compensation, double x) {
  const double t = sum + x;
  compensation += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
  sum = t;
}

}  // namespace

void OverallPart::add_sorted(std::span<const double> sorted, double part_sum) {
  if (sorted.empty()) return;
  min = count == 0 ? sorted.front() : std::min(min, sorted.front());
  max = count == 0 ? sorted.back() : std::max(max, sorted.back());
  count += sorted.size();
  add_compensated(sum, compensation, part_sum);
  sketch.add_sorted(sorted);
  values.add_sorted(sorted);
}

void OverallPart::merge(const OverallPart& other) {
  if (other.count == 0) return;
  min = count == 0 ? other.min : std::min(min, other.min);
  max = count == 0 ? other.max : std::max(max, other.max);
  count += other.count;
  add_compensated(sum, compensation, other.sum);
  add_compensated(sum, compensation, other.compensation);
  sketch.merge(other.sketch);
  values.merge(other.values);
}

std::optional<MetricOverall> OverallPart::result() const {
  if (count == 0) return std::nullopt;
  const double mean = (sum + compensation) / static_cast<double>(count);
  if (const auto exact = values.quantile(0.5)) {
    return MetricOverall{count, mean, *exact, min, max, true};
  }
  return MetricOverall{count, mean, sketch.quantile(0.5).value_or(mean), min, max, false};
}

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
  if (s.options.grid_series && !s.options.grid_series->periods.empty()) {
    // Slots: a gap before the first period, each period, a gap wherever the next one does not
    // start where this one ends, a gap after the last. ±1e18 s stand for "unbounded" (the
    // counter's readings clamp them).
    const auto& periods = s.options.grid_series->periods;
    auto seconds = [&s](std::int64_t wall_ns) {
      return static_cast<double>(wall_ns - s.result.t0_wall_ns) / 1e9;
    };
    // Only the periods the runs could have used: each GPU keeps one energy per slot, so a series
    // of years (a 64 MiB file) must not cost runs × GPUs × its length. The day after the runs
    // stays, for the greener-start estimate; a run still going (no end) bounds nothing.
    std::int64_t last_end = 0;
    for (const auto& run : s.result.runs) {
      last_end = run.end_wall_ns > 0 ? std::max(last_end, run.end_wall_ns)
                                     : std::numeric_limits<std::int64_t>::max();
    }
    constexpr std::int64_t kDayNs = 24LL * 3600 * 1'000'000'000;
    const std::int64_t keep_until =
        last_end > std::numeric_limits<std::int64_t>::max() - kDayNs ? last_end : last_end + kDayNs;
    s.slot_edges_s.push_back(-1e18);
    for (std::size_t i = 0; i < periods.size(); ++i) {
      if (periods[i].end_wall_ns <= s.result.t0_wall_ns || periods[i].start_wall_ns >= keep_until) {
        continue;
      }
      const double start = seconds(periods[i].start_wall_ns);
      if (start > s.slot_edges_s.back()) {
        s.slot_period.push_back(-1);
        s.slot_edges_s.push_back(start);
      }
      s.slot_period.push_back(static_cast<std::ptrdiff_t>(i));
      s.slot_edges_s.push_back(seconds(periods[i].end_wall_ns));
    }
    s.slot_period.push_back(-1);
    s.slot_edges_s.push_back(1e18);
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

ActivitySum ActivityPart::fixed(double value) {
  constexpr double kLimit = 0x1p40;  // an activity is 0..1; a damaged file's is kept bounded
  const double scaled = std::clamp(value, -kLimit, kLimit) * 0x1p60;
  // An activity fits in 64 bits: the processor's conversion truncates as the 128-bit one (a
  // libgcc call, most of pass 1's time on the main thread) does.
  if (std::fabs(scaled) < 0x1p63) return static_cast<std::int64_t>(scaled);
  return static_cast<ActivitySum>(scaled);
}

double ActivityPart::value(ActivitySum sum) {
  return static_cast<double>(sum) * 0x1p-60;
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

void OverallCounts::take(PreparedDevice& device) {
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    OverallPart& part = device.overall[m];
    if (in_overall(device.report.key, static_cast<Metric>(m))) {
      sketch[m].merge(part.sketch);
      values[m].merge(part.values);
    }
    part.sketch = QuantileSketch{0.001};
    part.values = ValueCounts{};
  }
  score_sketch.merge(device.score.sketch);
  score_values.merge(device.score.values);
  device.score.sketch = QuantileSketch{0.001};
  device.score.values = ValueCounts{};
}

void OverallCounts::merge(const OverallCounts& other) {
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    sketch[m].merge(other.sketch[m]);
    values[m].merge(other.values[m]);
  }
  score_sketch.merge(other.score_sketch);
  score_values.merge(other.score_values);
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

namespace {

// The samples of one GPU inside the analysis window: [first, last] when any.
struct WindowSpan {
  bool any = false;
  std::size_t first = 0, last = 0;
};

// A stretch of consecutive samples in one over-space bin (space_count: outside the grid);
// samples before the run's start (t < 0) belong to none.
struct BinStretch {
  std::size_t bin = 0, begin = 0, end = 0;
};

// The samples' stretches, computed once per GPU for every metric.
void bin_stretches(std::span<const double> t_s, double bin_s, std::size_t space_count,
                   std::vector<BinStretch>& out) {
  out.clear();
  for (std::size_t i = 0; i < t_s.size(); ++i) {
    if (t_s[i] < 0) continue;
    const double b = t_s[i] / bin_s;
    const std::size_t bin =
        b < static_cast<double>(space_count) ? static_cast<std::size_t>(b) : space_count;
    if (out.empty() || out.back().bin != bin || out.back().end != i) {
      out.push_back({bin, i, i + 1});
    } else {
      out.back().end = i + 1;
    }
  }
}

// One metric's mean in each over-space bin, over its values that are not NaN, in sample order:
// a run of samples in one bin makes one (bin, mean), bins at space_count are left out.
void space_means(std::span<const double> v, std::span<const BinStretch> stretches,
                 std::size_t space_count, std::vector<std::pair<std::size_t, double>>& space) {
  std::size_t bin = std::numeric_limits<std::size_t>::max();
  double sum = 0;
  std::size_t count = 0;
  for (const BinStretch& stretch : stretches) {
    std::size_t i = stretch.begin;
    const std::size_t end = std::min(stretch.end, v.size());
    if (stretch.bin != bin) {
      while (i < end && std::isnan(v[i])) ++i;
      if (i == end) continue;  // no value: the run of the previous bin goes on
      if (count > 0 && bin < space_count) space.emplace_back(bin, sum / static_cast<double>(count));
      bin = stretch.bin;
      sum = 0;
      count = 0;
    }
    for (; i < end; ++i) {
      const double x = v[i];
      if (std::isnan(x)) continue;
      sum += x;
      ++count;
    }
  }
  if (count > 0 && bin < space_count) space.emplace_back(bin, sum / static_cast<double>(count));
}

// Over time (this GPU), over both (all GPUs) and over space (grid bins), for every summarised
// metric.
void summarise_metrics(const DeviceSeries& d, const WindowSpan& w,
                       std::span<const BinStretch> stretches, std::size_t space_count,
                       PreparedDevice& out, std::vector<double>& sorted) {
  GpuReport& report = out.report;
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    if (!summarised(static_cast<Metric>(m))) continue;
    const auto& v = d.values[m];
    if (v.empty()) continue;
    if (w.any) {
      double sum = 0;
      const std::span<const double> window(v.data() + w.first, w.last - w.first + 1);
      report.over_time[m] = summarize(window, sorted, sum, out.overall[m].sort_resolution());
      out.overall[m].add_sorted(sorted, sum);
    }
    space_means(v, stretches, space_count, out.space[m]);
  }
}

// Activity (SM active, else GPU utilisation) and the efficiency score inside the window.
void activity_and_score(const DeviceSeries& d, const WindowSpan& w, PreparedDevice& out,
                        std::vector<double>& sorted) {
  GpuReport& report = out.report;
  const bool any = w.any;
  const std::size_t first = w.first, last = w.last;
  const auto& sm = d.of(Metric::SmActivePct);
  const auto any_value = [](const std::vector<double>& v) {
    return std::any_of(v.begin(), v.end(), [](double x) { return !std::isnan(x); });
  };
  // A MIG instance has no utilization rates (NVML refuses them): graphics active stands in.
  const bool graphics = d.key.mig && !any_value(sm) && !any_value(d.of(Metric::GpuUtilPct)) &&
                        any_value(d.of(Metric::GraphicsActivePct));
  const auto& util = graphics ? d.of(Metric::GraphicsActivePct) : d.of(Metric::GpuUtilPct);
  report.activity_metric =
      any_value(sm) ? "sm_active_pct" : (graphics ? "graphics_active_pct" : "gpu_util_pct");
  RunningStats activity;
  std::vector<double> scores;
  const auto& occ = d.of(Metric::SmOccupancyPct);
  const auto& f64 = d.of(Metric::Fp64ActivePct);
  const auto& f32 = d.of(Metric::Fp32ActivePct);
  const auto& f16 = d.of(Metric::Fp16ActivePct);
  const auto& tensor = d.of(Metric::TensorActivePct);
  const bool by_sm = report.activity_metric == "sm_active_pct";
  for (std::size_t i = first; any && i <= last; ++i) {
    const double a =
        by_sm ? (sm.empty() ? kNaN : sm[i] / 100) : (util.empty() ? kNaN : util[i] / 100);
    activity.add(a);
    if (sm.empty() || occ.empty() || f64.empty() || f32.empty() || f16.empty() || tensor.empty()) {
      continue;
    }
    const double flop = (f64[i] + f32[i] + f16[i] + tensor[i]) / 100.0;
    if (auto score = efficiency_score(sm[i] / 100.0, flop, occ[i] / 100.0)) {
      scores.push_back(*score);
    }
  }
  if (activity.count() > 0) report.activity = activity.mean();
  double score_sum = 0;
  report.score = summarize(scores, sorted, score_sum, out.score.sort_resolution());
  out.score.add_sorted(sorted, score_sum);
}

// Energy over the whole run: the counter, power integrated as a cross-check, peaks, throttling.
void device_energy(const DeviceSeries& d, const WindowSpan& w, std::span<const double> slot_edges_s,
                   GpuEnergy& e) {
  const std::size_t n = d.t_s.size();
  const bool any = w.any;
  const std::size_t first = w.first, last = w.last;
  const double max_gap = std::max(5 * d.sampling_interval_s, 1.0);
  // The counter and the integration are taken over the same readings: the fast power cadence
  // when it was recorded (it reads the counter too), else the samples. Their difference is then
  // what sampled power missed, not a difference of spans.
  const bool fast = !d.power_w.empty();
  // The readings the counter's energy came from: the fast cadence's when it read the counter.
  std::span<const double> counter_t = d.power_t_s, counter_mj = d.power_energy_mj;
  auto counter = fast ? counter_energy(counter_t, counter_mj) : std::nullopt;
  if (!counter) {
    counter_t = d.t_s;
    counter_mj = d.of(Metric::EnergyMj);
    counter = counter_energy(counter_t, counter_mj);
  }
  if (counter) e.counter_j = counter->joules;
  // With a grid series: the same readings split at its periods' edges.
  if (counter && !slot_edges_s.empty()) {
    e.slot_j = counter_energy_in(counter_t, counter_mj, slot_edges_s);
  }
  const double integrated = fast ? integrate_power(d.power_t_s, d.power_w, max_gap)
                                 : integrate_power(d.t_s, d.of(Metric::PowerW), max_gap);
  if (integrated > 0) e.integrated_j = integrated;
  const double span = n > 1 ? d.t_s.back() - d.t_s.front() : 0;
  if (counter && counter->covered_s > 0)
    e.average_power_w = counter->joules / counter->covered_s;
  else if (e.integrated_j && span > 0)
    e.average_power_w = *e.integrated_j / span;
  double peak = max_value(d.of(Metric::PowerW));
  const double peak_instant = max_value(d.of(Metric::PowerInstantW));
  if (!std::isnan(peak_instant) && (std::isnan(peak) || peak_instant > peak)) peak = peak_instant;
  e.peak_power_w = finite(peak);
  e.power_limit_w = finite(last_value(d.of(Metric::PowerLimitW)));
  if (any && !d.of(Metric::ClockEventReasons).empty()) {
    const auto& r = d.of(Metric::ClockEventReasons);
    std::span<const double> ts(d.t_s.data() + first, last - first + 1);
    std::span<const double> rs(r.data() + first, last - first + 1);
    e.throttle = throttle_time(ts, rs, max_gap);
  }
}

// A MIG GPU's bins for the split of its energy (analyze/mig_share): a parent's energy from the
// readings device_energy uses, an instance's activity (SM active, else graphics active).
MigBins mig_bins_of(const DeviceSeries& d, double bin_s, std::size_t bins) {
  if (d.key.mig) {
    const auto& sm = d.of(Metric::SmActivePct);
    const auto& gr = d.of(Metric::GraphicsActivePct);
    std::vector<double> activity(d.t_s.size(), kNaN);
    for (std::size_t i = 0; i < activity.size(); ++i) {
      const double a = i < sm.size() ? sm[i] : kNaN;
      activity[i] = (std::isnan(a) && i < gr.size() ? gr[i] : a) / 100.0;
    }
    return mig_instance_bins(d.t_s, activity, bin_s, bins);
  }
  const double max_gap = std::max(5 * d.sampling_interval_s, 1.0);
  const std::span<const double> none;
  MigBins out;
  if (!d.power_w.empty()) {
    out = mig_parent_bins(d.power_t_s, d.power_energy_mj, none, max_gap, bin_s, bins);
  }
  if (out.energy_j.empty()) {
    out = mig_parent_bins(d.t_s, d.of(Metric::EnergyMj), none, max_gap, bin_s, bins);
  }
  if (out.energy_j.empty()) {
    out = d.power_w.empty()
              ? mig_parent_bins(d.t_s, none, d.of(Metric::PowerW), max_gap, bin_s, bins)
              : mig_parent_bins(d.power_t_s, none, d.power_w, max_gap, bin_s, bins);
  }
  return out;
}

}  // namespace

PreparedDevice Analyzer::prepare_device(const DeviceSeries& d) const {
  const State& s = *state_;
  const Window& w = s.result.window;
  PreparedDevice out;
  GpuReport& report = out.report;
  report.key = d.key;
  const std::size_t n = d.t_s.size();

  // Samples inside the window.
  WindowSpan span;
  span.first = n;
  for (std::size_t i = 0; i < n; ++i) {
    if (d.t_s[i] >= w.start_s && d.t_s[i] < w.end_s) {
      span.first = std::min(span.first, i);
      span.last = i;
    }
  }
  span.any = span.first < n;
  if (!span.any) span.first = 0;
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
  device_energy(d, span, s.slot_edges_s, report.energy);
  for (Metric m : s.options.gpu_grid_metrics) {
    report.grid.push_back(
        {m, gpu_grid_means(d.t_s, d.of(m), s.result.gpu_grid_bin_s, s.result.gpu_grid_bins)});
  }
  if (s.phases)
    out.phases = s.phases->measure(d, static_cast<std::size_t>(d.key.run_id), d.key.device_index);
  if (d.key.mig || d.key.mig_enabled.value_or(false)) {
    out.mig_bins = mig_bins_of(d, s.space_bin_s, s.space_count);
  }
  return out;
}

void Analyzer::set_phases(std::vector<std::string> names, std::vector<PhaseSpan> spans) {
  if (spans.empty()) {
    state_->phases.reset();
    return;
  }
  state_->phases.emplace(std::move(names), std::move(spans));
}

// What a MIG instance measures of its own: its memory and its saturation metrics. A GPU in MIG
// mode reports the same over the whole GPU; in the statistics over all GPUs its instances stand
// for it, so that no SM or byte is counted twice (its own row keeps its whole-GPU figures).
bool in_overall(const GpuKey& key, Metric metric) {
  const bool mig_parent = !key.mig && key.mig_enabled.value_or(false);
  if (!mig_parent) return true;
  const bool memory = metric >= Metric::MemoryUsedBytes && metric <= Metric::MemoryReservedBytes;
  const bool saturation = metric >= Metric::GraphicsActivePct && metric <= Metric::IntegerActivePct;
  return !(memory || saturation || metric == Metric::FlopActivePct);
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

// Carbon from the grid series: each period's energy (all GPUs' counters split at its edges) times
// its intensity; energy in the gaps, and that of GPUs without a counter, at `c`'s flat figure
// (the user's --carbon-intensity or the yearly average), which also gives the comparison.
void series_carbon(const IntensitySeries& series, std::span<const std::ptrdiff_t> slot_period,
                   Analysis& a, double energy_j, Carbon& c) {
  std::vector<double> slot_j(slot_period.size(), 0.0);
  double split_j = 0;
  for (const auto& g : a.gpus) {
    if (g.energy.slot_j.size() != slot_j.size()) continue;
    for (std::size_t k = 0; k < slot_j.size(); ++k) {
      slot_j[k] += g.energy.slot_j[k];
      split_j += g.energy.slot_j[k];
    }
  }
  const double flat_g_per_kwh = c.g_per_kwh;
  c.yearly_grams = c.grams;
  c.fallback_source = c.source;
  double in_periods_j = 0, grams = 0;
  std::vector<double> period_j(series.periods.size(), 0.0);
  for (std::size_t k = 0; k < slot_j.size(); ++k) {
    const std::ptrdiff_t p = slot_period[k];
    if (p < 0) continue;
    period_j[static_cast<std::size_t>(p)] = slot_j[k];
    const IntensityPeriod& period = series.periods[static_cast<std::size_t>(p)];
    CarbonInterval interval{
        period.start_wall_ns, period.end_wall_ns, period.g_per_kwh,
        period.kind,          slot_j[k],          carbon_grams(slot_j[k], period.g_per_kwh, c.pue)};
    in_periods_j += slot_j[k];
    grams += interval.grams;
    if (slot_j[k] > 0) c.intervals.push_back(std::move(interval));
  }
  // What the periods did not cover: the gaps, and GPUs whose counter could not be split.
  const double outside_j = std::max(0.0, energy_j - in_periods_j);
  grams += carbon_grams(outside_j, flat_g_per_kwh, c.pue);
  c.grams = grams;
  c.coverage = energy_j > 0 ? in_periods_j / energy_j : 0.0;
  c.g_per_kwh = energy_j > 0 ? grams / c.pue / (energy_j / 3.6e6) : flat_g_per_kwh;
  c.source = series.source;
  c.region = series.region;
  if (outside_j > 0.005 * energy_j) {
    a.notes.push_back(fmt::format(
        "{:.0f} % of the energy fell outside the periods of {} and was counted at {:.0f} gCO2e/kWh "
        "({})",
        100 * outside_j / energy_j, series.source, flat_g_per_kwh, c.fallback_source));
  }
  if (split_j <= 0) {
    a.notes.push_back("no GPU's energy counter could be split at the periods of " + series.source +
                      ": carbon counted at the flat figure");
  }
  // Each GPU's own carbon: its periods' energy at their intensity, the rest at the flat figure.
  for (auto& g : a.gpus) {
    const std::optional<double> gpu_j =
        g.energy.counter_j ? g.energy.counter_j : g.energy.integrated_j;
    if (!gpu_j) continue;
    double gpu_in_j = 0, gpu_g = 0;
    if (g.energy.slot_j.size() == slot_period.size()) {
      for (std::size_t k = 0; k < slot_period.size(); ++k) {
        if (slot_period[k] < 0) continue;
        const auto& period = series.periods[static_cast<std::size_t>(slot_period[k])];
        gpu_in_j += g.energy.slot_j[k];
        gpu_g += carbon_grams(g.energy.slot_j[k], period.g_per_kwh, c.pue);
      }
    }
    g.energy.carbon_g =
        gpu_g + carbon_grams(std::max(0.0, *gpu_j - gpu_in_j), flat_g_per_kwh, c.pue);
  }
  constexpr std::int64_t kDayNs = 24LL * 3600 * 1'000'000'000;
  c.greener = greener_start(series.periods, period_j, c.pue, kDayNs);
  if (c.greener) {
    const auto& g = *c.greener;
    const auto later_min = g.later_ns / 60'000'000'000;
    a.findings.push_back(
        {"greener_start",
         fmt::format("starting {} h {:02} min later (in the period from {} UTC) would have emitted "
                     "{:.0f} % less: {:.3g} instead of {:.3g} gCO2e (an estimate: the same energy "
                     "profile, the grid's {} figures)",
                     later_min / 60, later_min % 60,
                     util::utc_text(g.start_wall_ns, "%Y-%m-%d %H:%M"), 100 * g.saving, g.grams,
                     g.baseline_grams, g.kind.text())});
  }
}

}  // namespace

Analysis Analyzer::finish() {
  State& s = *state_;
  Analysis& a = s.result;
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    a.over_both[m] = s.overall[m].result();
    const SpaceBins& bins = s.space[m];
    for (std::size_t b = 0; b < bins.gpus.size(); ++b) {
      if (bins.gpus[b] == 0) continue;
      a.over_space[m].push_back({static_cast<double>(b) * s.space_bin_s, bins.sum[b] / bins.gpus[b],
                                 bins.min[b], bins.max[b], bins.min_gpu[b], bins.max_gpu[b],
                                 bins.gpus[b]});
    }
  }
  a.score = s.score.result();

  // Load balance over the GPUs that reported activity, MIG instances among themselves; the
  // instances' estimated shares of their parents' energy.
  balance_with_instances(a, s.options.straggler_threshold);
  estimate_mig_shares(a, s.mig_bins);
  s.mig_bins.clear();

  // Totals, counting a GPU only where its figure exists (and saying so otherwise).
  // MIG instances measure no energy of their own: their estimates are never summed.
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
  const std::optional<double> energy =
      a.energy_counter_j ? a.energy_counter_j : a.energy_integrated_j;
  a.work_units = s.options.work_units;
  if (energy && a.work_units && *a.work_units > 0) a.energy_per_unit_j = *energy / *a.work_units;

  // Carbon: a grid series joined with each period's energy; else the user's intensity, a
  // region's yearly average, else the world average.
  if (energy) {
    Carbon c;
    c.pue = s.options.pue;
    const auto region = find_region(s.options.region.value_or("WORLD"));
    const GridRegion r = region ? *region : *find_region("WORLD");
    const std::string yearly_source =
        fmt::format("{} yearly average {} ({})", r.name, r.year, r.source);
    if (s.options.carbon_g_per_kwh) {
      c.g_per_kwh = *s.options.carbon_g_per_kwh;
      c.source = "given with --carbon-intensity";
    } else {
      c.g_per_kwh = r.g_per_kwh;
      c.region = std::string(r.code);
      c.source = yearly_source;
      if (!s.options.region) c.source += "; pass --region or --carbon-intensity for your grid";
    }
    c.grams = carbon_grams(*energy, c.g_per_kwh, c.pue);
    for (auto& g : a.gpus) {
      const std::optional<double> gpu_j =
          g.energy.counter_j ? g.energy.counter_j : g.energy.integrated_j;
      if (gpu_j) g.energy.carbon_g = carbon_grams(*gpu_j, c.g_per_kwh, c.pue);
    }
    if (!s.slot_period.empty()) series_carbon(*s.options.grid_series, s.slot_period, a, *energy, c);
    if (a.work_units && *a.work_units > 0) c.grams_per_unit = c.grams / *a.work_units;
    a.carbon = c;
  }

  if (s.phases) {
    a.phases = s.phases->finish(energy, a.work_units, a.gpus.size(), s.options.max_phase_instances);
  }

  // The carbon findings (a greener start) come after the data's and the diagnosis'.
  std::stable_sort(a.mig_changes.begin(), a.mig_changes.end(),
                   [](const MigChange& x, const MigChange& y) { return x.t_s < y.t_s; });
  std::stable_sort(a.health.events.begin(), a.health.events.end(),
                   [](const HealthEvent& x, const HealthEvent& y) { return x.t_s < y.t_s; });
  std::vector<Finding> carbon_findings = std::move(a.findings);
  a.findings = std::move(s.data_findings);
  for (auto& f : diagnose(a)) a.findings.push_back(std::move(f));
  for (auto& f : carbon_findings) a.findings.push_back(std::move(f));
  return std::move(a);
}

}  // namespace gpuscope::analyze
