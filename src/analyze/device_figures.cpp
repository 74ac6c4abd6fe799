#include "analyze/device_figures.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "analyze/energy.hpp"
#include "analyze/mig_share.hpp"
#include "analyze/score.hpp"

namespace gpuscope::analyze {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

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

}  // namespace

WindowSpan window_span(std::span<const double> t_s, const Window& w) {
  const std::size_t n = t_s.size();
  WindowSpan span;
  span.first = n;
  for (std::size_t i = 0; i < n; ++i) {
    if (t_s[i] >= w.start_s && t_s[i] < w.end_s) {
      span.first = std::min(span.first, i);
      span.last = i;
    }
  }
  span.any = span.first < n;
  if (!span.any) span.first = 0;
  return span;
}

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

}  // namespace gpuscope::analyze
