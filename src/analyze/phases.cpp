#include "analyze/phases.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "analyze/analyzer.hpp"
#include "analyze/energy.hpp"

namespace gpuscope::analyze {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Linear interpolation of cumulative values `cum` at times `t` (increasing), clamped to the ends.
double interpolate(const std::vector<double>& t, const std::vector<double>& cum, double x) {
  if (t.empty()) return 0;
  if (x <= t.front()) return cum.front();
  if (x >= t.back()) return cum.back();
  const auto after = std::upper_bound(t.begin(), t.end(), x);
  const auto i = static_cast<std::size_t>(after - t.begin());
  const double t0 = t[i - 1], t1 = t[i];
  if (t1 <= t0) return cum[i];
  return cum[i - 1] + (cum[i] - cum[i - 1]) * (x - t0) / (t1 - t0);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> PhaseAnalysis::slow_stretches(
    const std::vector<double>& times, const std::vector<std::size_t>& spans, double median) const {
  struct Stretch {
    std::size_t first, last;
  };
  std::vector<Stretch> found;
  const double limit = median * kSlowFactor;
  for (std::size_t k = 0; k < times.size(); ++k) {
    if (!(times[k] > limit) || median <= 0) continue;
    if (!found.empty() && found.back().last + 1 == k) {
      found.back().last = k;
    } else {
      found.push_back({k, k});
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const Stretch& x, const Stretch& y) {
    return x.last - x.first > y.last - y.first;
  });
  if (found.size() > 3) found.resize(3);
  const auto label = [&](std::size_t k) {
    const std::string& instance = spans_[spans[k]].instance;
    return instance.empty() ? std::to_string(k + 1) : instance;
  };
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& s : found) out.emplace_back(label(s.first), label(s.last));
  return out;
}

PhaseBins PhaseAnalysis::bin_phases() const {
  PhaseBins b;
  double end = 0;
  int deepest = 0;
  for (std::size_t i = 0; i < spans_.size(); ++i) {
    end = std::max(end, spans_[i].end_s);
    deepest = std::max(deepest, layout_.depth[i]);
  }
  b.bins = kPhaseBins;
  b.bin_s = std::max(end, 1e-3) / static_cast<double>(b.bins);
  const std::size_t rows =
      std::min<std::size_t>(kPhaseBinRows, 1 + static_cast<std::size_t>(deepest));
  b.busy_s.assign(rows, std::vector<double>(b.bins, 0));
  b.started.assign(rows, std::vector<std::uint32_t>(b.bins, 0));
  b.longest_name.assign(rows, std::vector<std::int32_t>(b.bins, -1));
  b.longest_s.assign(rows, std::vector<double>(b.bins, 0));
  const auto bin_of = [&b](double t) {
    return std::min(b.bins - 1, static_cast<std::size_t>(std::max(0.0, t / b.bin_s)));
  };
  for (std::size_t i = 0; i < spans_.size(); ++i) {
    const PhaseSpan& s = spans_[i];
    if (s.point) continue;
    const std::size_t row =
        std::min(rows - 1, static_cast<std::size_t>(std::max(0, layout_.depth[i])));
    const std::size_t first = bin_of(s.start_s), last = bin_of(s.end_s);
    for (std::size_t k = first; k <= last; ++k) {
      const double lo = std::max(s.start_s, static_cast<double>(k) * b.bin_s);
      const double hi = std::min(s.end_s, static_cast<double>(k + 1) * b.bin_s);
      if (hi > lo) b.busy_s[row][k] += hi - lo;
    }
    ++b.started[row][first];
    const double length = s.end_s - s.start_s;
    if (b.longest_name[row][first] < 0 || length > b.longest_s[row][first]) {
      b.longest_name[row][first] = static_cast<std::int32_t>(s.name);
      b.longest_s[row][first] = length;
    }
  }
  return b;
}

PhaseLayout layout_phases(std::span<const PhaseSpan> spans) {
  const std::size_t n = spans.size();
  PhaseLayout out;
  out.parent.assign(n, -1);
  out.depth.assign(n, 0);
  std::vector<std::size_t> order;
  order.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!spans[i].point) order.push_back(i);
  }
  // By track, then start, the longest first: an enclosing span comes before what it encloses.
  std::sort(order.begin(), order.end(), [&spans](std::size_t a, std::size_t b) {
    const PhaseSpan& x = spans[a];
    const PhaseSpan& y = spans[b];
    if (x.track != y.track) return x.track < y.track;
    if (x.start_s != y.start_s) return x.start_s < y.start_s;
    if (x.end_s != y.end_s) return x.end_s > y.end_s;
    return a < b;
  });
  std::vector<std::size_t> stack;
  std::uint64_t track = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t i = order[k];
    if (k == 0 || spans[i].track != track) {
      stack.clear();
      track = spans[i].track;
    }
    while (!stack.empty()) {
      const PhaseSpan& top = spans[stack.back()];
      if (top.start_s <= spans[i].start_s && spans[i].end_s <= top.end_s) break;
      stack.pop_back();
    }
    out.parent[i] = stack.empty() ? -1 : static_cast<std::int64_t>(stack.back());
    out.depth[i] = static_cast<int>(stack.size());
    stack.push_back(i);
  }
  // The children of each span, grouped (counting sort), then merged into disjoint intervals.
  std::vector<std::size_t> count(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (out.parent[i] >= 0) ++count[static_cast<std::size_t>(out.parent[i]) + 1];
  }
  std::partial_sum(count.begin(), count.end(), count.begin());
  std::vector<std::pair<double, double>> children(count[n]);
  std::vector<std::size_t> fill(count.begin(), count.end() - 1);
  for (std::size_t i = 0; i < n; ++i) {
    if (out.parent[i] < 0) continue;
    children[fill[static_cast<std::size_t>(out.parent[i])]++] = {spans[i].start_s, spans[i].end_s};
  }
  out.cover_begin.assign(n + 1, 0);
  out.cover.reserve(children.size());
  for (std::size_t p = 0; p < n; ++p) {
    out.cover_begin[p] = out.cover.size();
    auto first = children.begin() + static_cast<std::ptrdiff_t>(count[p]);
    auto last = children.begin() + static_cast<std::ptrdiff_t>(count[p + 1]);
    std::sort(first, last);
    for (auto it = first; it != last; ++it) {
      if (!out.cover.empty() && out.cover.size() > out.cover_begin[p] &&
          it->first <= out.cover.back().second) {
        out.cover.back().second = std::max(out.cover.back().second, it->second);
      } else {
        out.cover.push_back(*it);
      }
    }
  }
  out.cover_begin[n] = out.cover.size();
  return out;
}

IntervalMeter::IntervalMeter(const DeviceSeries& d)
    : max_gap_s_(std::max(5 * d.sampling_interval_s, 1.0)),
      last_hold_s_(std::min(d.sampling_interval_s, std::max(5 * d.sampling_interval_s, 1.0))) {
  // Energy: the counter's increases, at the fast power cadence when it read the counter.
  const auto cumulate_counter = [this](const std::vector<double>& t,
                                       const std::vector<double>& mj) {
    energy_t_.clear();
    energy_cum_j_.clear();
    double last = kNaN;
    double total = 0;
    const std::size_t n = std::min(t.size(), mj.size());
    for (std::size_t i = 0; i < n; ++i) {
      if (std::isnan(mj[i]) || std::isnan(t[i])) continue;
      if (!energy_t_.empty() && t[i] < energy_t_.back()) continue;
      if (!std::isnan(last) && mj[i] >= last) total += (mj[i] - last) / 1000.0;
      last = mj[i];
      energy_t_.push_back(t[i]);
      energy_cum_j_.push_back(total);
    }
    if (energy_t_.size() < 2) {
      energy_t_.clear();
      energy_cum_j_.clear();
    }
  };
  if (!d.power_t_s.empty()) cumulate_counter(d.power_t_s, d.power_energy_mj);
  if (energy_t_.empty()) cumulate_counter(d.t_s, d.of(Metric::EnergyMj));
  if (energy_t_.empty()) {
    // No counter: power integrated (trapezoids), gaps longer than max_gap not bridged.
    const bool fast = !d.power_w.empty();
    const std::vector<double>& t = fast ? d.power_t_s : d.t_s;
    const std::vector<double>& w = fast ? d.power_w : d.of(Metric::PowerW);
    double total = 0;
    std::optional<std::pair<double, double>> previous;
    for (std::size_t i = 0; i < std::min(t.size(), w.size()); ++i) {
      if (std::isnan(w[i]) || std::isnan(t[i])) continue;
      if (previous && t[i] >= previous->first) {
        const double dt = t[i] - previous->first;
        if (dt <= max_gap_s_) total += dt * (w[i] + previous->second) / 2;
      } else if (previous) {
        continue;
      }
      previous = {t[i], w[i]};
      energy_t_.push_back(t[i]);
      energy_cum_j_.push_back(total);
    }
    if (energy_t_.size() < 2) {
      energy_t_.clear();
      energy_cum_j_.clear();
    }
  }
  // Metrics: each sample holds until the next, at most max_gap (as throttle_time does).
  metric_t_ = d.t_s;
  const std::size_t n = metric_t_.size();
  for (std::size_t m = 0; m < kPhaseMetrics.size(); ++m) {
    const auto& v = d.of(kPhaseMetrics[m]);
    auto& value = value_[m];
    value.assign(n, kNaN);
    for (std::size_t i = 0; i < std::min(n, v.size()); ++i) value[i] = v[i];
    auto& integral = integral_[m];
    auto& covered = covered_[m];
    integral.assign(n, 0);
    covered.assign(n, 0);
    for (std::size_t i = 1; i < n; ++i) {
      const double hold = std::clamp(metric_t_[i] - metric_t_[i - 1], 0.0, max_gap_s_);
      const bool known = !std::isnan(value[i - 1]);
      integral[i] = integral[i - 1] + (known ? value[i - 1] * hold : 0);
      covered[i] = covered[i - 1] + (known ? hold : 0);
    }
  }
}

std::optional<double> IntervalMeter::energy_j(double a, double b) const {
  if (energy_t_.empty()) return std::nullopt;
  if (b <= a) return 0.0;
  return interpolate(energy_t_, energy_cum_j_, b) - interpolate(energy_t_, energy_cum_j_, a);
}

std::pair<double, double> IntervalMeter::metric(std::size_t m, double a, double b) const {
  const std::size_t n = metric_t_.size();
  if (n == 0 || b <= a) return {0, 0};
  const auto& integral = integral_[m];
  const auto& covered = covered_[m];
  const auto& value = value_[m];
  // The integral and the covered time from the first sample to x.
  const auto at = [&](double x) -> std::pair<double, double> {
    if (x <= metric_t_.front()) return {0, 0};
    const auto after = std::upper_bound(metric_t_.begin(), metric_t_.end(), x);
    const auto i = static_cast<std::size_t>(after - metric_t_.begin()) - 1;  // t[i] <= x
    const double limit =
        i + 1 < n ? std::clamp(metric_t_[i + 1] - metric_t_[i], 0.0, max_gap_s_) : last_hold_s_;
    const double held = std::min(x - metric_t_[i], limit);
    const bool known = !std::isnan(value[i]);
    return {integral[i] + (known ? value[i] * held : 0), covered[i] + (known ? held : 0)};
  };
  const auto [ia, ca] = at(a);
  const auto [ib, cb] = at(b);
  return {ib - ia, cb - ca};
}

PhaseAnalysis::PhaseAnalysis(std::vector<std::string> names, std::vector<PhaseSpan> spans)
    : names_(std::move(names)), spans_(std::move(spans)) {
  layout_ = layout_phases(spans_);
  const std::size_t n = spans_.size();
  energy_j_.assign(n, 0);
  exclusive_energy_j_.assign(n, 0);
  energy_known_.assign(n, 0);
  integral_.assign(n, {});
  covered_.assign(n, {});
  name_gpu_energy_.assign(names_.size(), {});
  for (std::size_t i = 0; i < n; ++i) {
    if (spans_[i].point) continue;
    if (spans_[i].run >= by_run_.size()) by_run_.resize(spans_[i].run + 1);
    by_run_[spans_[i].run].push_back(static_cast<std::uint32_t>(i));
  }
}

PhaseGpuPart PhaseAnalysis::measure(const DeviceSeries& series, std::size_t run,
                                    unsigned device_index) const {
  PhaseGpuPart part;
  if (run >= by_run_.size() || by_run_[run].empty()) return part;
  const IntervalMeter meter(series);
  for (const std::uint32_t i : by_run_[run]) {
    const PhaseSpan& s = spans_[i];
    if (s.device_index && *s.device_index != device_index) continue;
    part.spans.push_back(i);
    const auto energy = meter.energy_j(s.start_s, s.end_s);
    double exclusive = energy.value_or(kNaN);
    if (energy) {
      for (std::size_t c = layout_.cover_begin[i]; c < layout_.cover_begin[i + 1]; ++c) {
        exclusive -= meter.energy_j(layout_.cover[c].first, layout_.cover[c].second).value_or(0);
      }
    }
    part.energy_j.push_back(energy.value_or(kNaN));
    part.exclusive_energy_j.push_back(energy ? std::max(exclusive, 0.0) : kNaN);
    std::array<double, kPhaseMetrics.size()> integral{}, covered{};
    for (std::size_t m = 0; m < kPhaseMetrics.size(); ++m) {
      std::tie(integral[m], covered[m]) = meter.metric(m, s.start_s, s.end_s);
    }
    part.integral.push_back(integral);
    part.covered.push_back(covered);
  }
  return part;
}

void PhaseAnalysis::add(const PhaseGpuPart& part) {
  for (std::size_t k = 0; k < part.spans.size(); ++k) {
    const std::size_t i = part.spans[k];
    if (!std::isnan(part.energy_j[k])) {
      energy_j_[i] += part.energy_j[k];
      exclusive_energy_j_[i] += part.exclusive_energy_j[k];
      energy_known_[i] = 1;
      auto& per_gpu = name_gpu_energy_[spans_[i].name];
      if (per_gpu.size() <= part.gpu) per_gpu.resize(part.gpu + 1, kNaN);
      per_gpu[part.gpu] =
          (std::isnan(per_gpu[part.gpu]) ? 0 : per_gpu[part.gpu]) + part.energy_j[k];
    }
    for (std::size_t m = 0; m < kPhaseMetrics.size(); ++m) {
      integral_[i][m] += part.integral[k][m];
      covered_[i][m] += part.covered[k][m];
    }
  }
}

// The steps of PhaseAnalysis::finish.
namespace {

// Whether phases get a share of the job's energy: only when the job measured some.
bool shares_of(std::optional<double> job_energy_j) {
  return job_energy_j && *job_energy_j > 0;
}

// The indices of `spans` in start order (ties in their given order).
std::vector<std::size_t> start_order(const std::vector<PhaseSpan>& spans) {
  std::vector<std::size_t> order(spans.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&spans](std::size_t a, std::size_t b) {
    return spans[a].start_s < spans[b].start_s;
  });
  return order;
}

// How long at least one of `ranges` (start, end) is open: the length of their union.
double union_length(std::vector<std::pair<double, double>> ranges) {
  std::sort(ranges.begin(), ranges.end());
  double covered = 0, open_start = 0, open_end = -std::numeric_limits<double>::infinity();
  for (const auto& [a, b] : ranges) {
    if (a > open_end) {
      if (open_end > open_start) covered += open_end - open_start;
      open_start = a;
      open_end = b;
    } else {
      open_end = std::max(open_end, b);
    }
  }
  if (open_end > open_start) covered += open_end - open_start;
  return covered;
}

// The median of `values` (the mean of the two middle ones when their number is even).
double median_of(std::vector<double> values) {
  auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  double median = *middle;
  if (values.size() % 2 == 0) {
    const double below = *std::max_element(values.begin(), middle);
    median = (median + below) / 2;
  }
  return median;
}

// What finish() gathers of one phase name from its instances, taken in start order.
struct NameTotals {
  std::vector<double> times;
  std::vector<std::size_t> spans;  // in start order, with times
  std::size_t points = 0, unclosed = 0;
  double time = 0, exclusive_time = 0, energy = 0, exclusive_energy = 0;
  bool energy_known = false;
  std::array<double, kPhaseMetrics.size()> integral{}, covered{};
  std::string source;

  // Adds an instance's source to the sources named ("mark+output"), each once.
  void add_source(std::string_view instance_source) {
    if (source.empty()) {
      source = instance_source;
    } else if (source.find(instance_source) == std::string::npos) {
      source += "+";
      source += instance_source;
    }
  }

  // Adds range `span`'s figures, and its metrics' integrals and covered times, to the totals.
  void add_instance(std::size_t span, bool closed, const PhaseFigures& f,
                    const std::array<double, kPhaseMetrics.size()>& span_integral,
                    const std::array<double, kPhaseMetrics.size()>& span_covered) {
    if (!closed) ++unclosed;
    times.push_back(f.time_s);
    spans.push_back(span);
    time += f.time_s;
    exclusive_time += f.exclusive_time_s;
    if (f.energy_j) {
      energy_known = true;
      energy += *f.energy_j;
      exclusive_energy += f.exclusive_energy_j.value_or(0);
    }
    for (std::size_t m = 0; m < kPhaseMetrics.size(); ++m) {
      integral[m] += span_integral[m];
      covered[m] += span_covered[m];
    }
  }
};

// A name's figures from its totals: counts, the spread of its instances' times and what they
// measured together (all but the slow stretches and the energy per GPU).
PhaseName name_of(const std::string& phase_name, const NameTotals& t,
                  std::optional<double> job_energy_j, std::optional<double> work_units) {
  PhaseName name;
  name.name = phase_name;
  name.source = t.source;
  name.count = t.times.size();
  name.points = t.points;
  name.unclosed = t.unclosed;
  if (!t.times.empty()) {
    const double count = static_cast<double>(t.times.size());
    name.mean_time_s = t.time / count;
    name.min_time_s = *std::min_element(t.times.begin(), t.times.end());
    name.max_time_s = *std::max_element(t.times.begin(), t.times.end());
    double squares = 0;
    for (const double time : t.times) {
      squares += (time - name.mean_time_s) * (time - name.mean_time_s);
    }
    name.time_cv = name.mean_time_s > 0 ? std::sqrt(squares / count) / name.mean_time_s : 0;
    name.median_time_s = median_of(t.times);
  }
  name.total.time_s = t.time;
  name.total.exclusive_time_s = t.exclusive_time;
  if (t.energy_known) {
    name.total.energy_j = t.energy;
    name.total.exclusive_energy_j = t.exclusive_energy;
    if (t.time > 0) name.total.mean_power_w = t.energy / t.time;
    if (shares_of(job_energy_j)) name.total.energy_share = t.energy / *job_energy_j;
    if (name.count > 0) name.mean_energy_j = t.energy / static_cast<double>(name.count);
    if (work_units && *work_units > 0) name.energy_per_unit_j = t.energy / *work_units;
  }
  for (std::size_t m = 0; m < kPhaseMetrics.size(); ++m) {
    if (t.covered[m] > 0) name.total.metrics[m] = t.integral[m] / t.covered[m];
  }
  return name;
}

// A name's energy on each of `gpu_count` GPUs (none where it measured nothing), from the sums
// per GPU position (NaN: nothing measured).
std::vector<std::optional<double>> gpu_energies(const std::vector<double>& per_gpu,
                                                std::size_t gpu_count) {
  std::vector<std::optional<double>> out(gpu_count, std::nullopt);
  for (std::size_t g = 0; g < std::min(gpu_count, per_gpu.size()); ++g) {
    if (!std::isnan(per_gpu[g])) out[g] = per_gpu[g];
  }
  return out;
}

// The names with the most energy first (those without energy last), then the longest.
void sort_by_energy(std::vector<PhaseName>& names) {
  std::stable_sort(names.begin(), names.end(), [](const PhaseName& a, const PhaseName& b) {
    const double ea = a.total.energy_j.value_or(-1);
    const double eb = b.total.energy_j.value_or(-1);
    if (ea != eb) return ea > eb;
    return a.total.time_s > b.total.time_s;
  });
}

}  // namespace

PhaseFigures PhaseAnalysis::instance_figures(std::size_t i,
                                             std::optional<double> job_energy_j) const {
  const PhaseSpan& s = spans_[i];
  PhaseFigures f;
  f.time_s = std::max(s.end_s - s.start_s, 0.0);
  double children = 0;
  for (std::size_t c = layout_.cover_begin[i]; c < layout_.cover_begin[i + 1]; ++c) {
    children += layout_.cover[c].second - layout_.cover[c].first;
  }
  f.exclusive_time_s = std::max(f.time_s - children, 0.0);
  if (energy_known_[i] != 0) {
    f.energy_j = energy_j_[i];
    f.exclusive_energy_j = exclusive_energy_j_[i];
    if (f.time_s > 0) f.mean_power_w = energy_j_[i] / f.time_s;
    if (shares_of(job_energy_j)) f.energy_share = energy_j_[i] / *job_energy_j;
  }
  for (std::size_t m = 0; m < kPhaseMetrics.size(); ++m) {
    if (covered_[i][m] > 0) f.metrics[m] = integral_[i][m] / covered_[i][m];
  }
  return f;
}

PhaseInstance PhaseAnalysis::instance_of(std::size_t i, const PhaseFigures& figures) const {
  const PhaseSpan& s = spans_[i];
  PhaseInstance instance;
  instance.span = i;
  instance.name = names_[s.name];
  instance.instance = s.instance;
  instance.source = to_text(s.source);
  instance.run = s.run;
  instance.start_s = s.start_s;
  instance.end_s = s.end_s;
  instance.closed = s.closed;
  instance.depth = layout_.depth[i];
  instance.figures = figures;
  return instance;
}

PhaseReport PhaseAnalysis::finish(std::optional<double> job_energy_j,
                                  std::optional<double> work_units, std::size_t gpu_count,
                                  std::size_t max_instances) const {
  PhaseReport report;
  std::vector<NameTotals> totals(names_.size());
  std::vector<std::pair<double, double>> ranges;
  for (const std::size_t i : start_order(spans_)) {
    const PhaseSpan& s = spans_[i];
    NameTotals& t = totals[s.name];
    t.add_source(to_text(s.source));
    if (s.point) {
      ++t.points;
      ++report.point_count;
      continue;
    }
    ++report.instance_count;
    const PhaseFigures f = instance_figures(i, job_energy_j);
    t.add_instance(i, s.closed, f, integral_[i], covered_[i]);
    ranges.emplace_back(s.start_s, s.end_s);
    if (report.instances.size() < max_instances) report.instances.push_back(instance_of(i, f));
  }
  report.span_names = names_;
  if (report.instance_count > report.instances.size()) report.bins = bin_phases();
  report.covered_time_s = union_length(std::move(ranges));

  for (std::size_t k = 0; k < names_.size(); ++k) {
    const NameTotals& t = totals[k];
    if (t.times.empty() && t.points == 0) continue;
    PhaseName name = name_of(names_[k], t, job_energy_j, work_units);
    if (!t.times.empty()) {
      name.slow_stretches = slow_stretches(t.times, t.spans, name.median_time_s);
    }
    name.gpu_energy_j = gpu_energies(name_gpu_energy_[k], gpu_count);
    report.names.push_back(std::move(name));
  }
  sort_by_energy(report.names);
  return report;
}

}  // namespace gpuscope::analyze
