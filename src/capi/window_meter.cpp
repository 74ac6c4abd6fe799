#include "capi/window_meter.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/clock.hpp"

namespace gpuscope::capi {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double value_or_nan(const SampleRow& row, Metric metric) {
  const auto v = row.get(metric);
  return v && std::isfinite(*v) ? *v : kNaN;
}

// Totals at a fraction of the way from `a` to `b`.
auto interpolate(const auto& a, const auto& b, double f) {
  auto out = a;
  out.energy_j = a.energy_j + f * (b.energy_j - a.energy_j);
  out.util_pct_s = a.util_pct_s + f * (b.util_pct_s - a.util_pct_s);
  out.util_s = a.util_s + f * (b.util_s - a.util_s);
  out.sm_pct_s = a.sm_pct_s + f * (b.sm_pct_s - a.sm_pct_s);
  out.sm_s = a.sm_s + f * (b.sm_s - a.sm_s);
  return out;
}

double mean_of(double value_s, double seconds) {
  return seconds > 0 ? value_s / seconds : kNaN;
}

// The totals at `t_ns`, between the samples `before` and `after` (or at `after`, with none before).
template <class Track>
auto totals_between(const Track& before, const Track& after, std::int64_t t_ns) {
  if (!before.any) return after.totals;
  double f = 0;
  if (after.t_ns > before.t_ns && t_ns > before.t_ns) {
    f = static_cast<double>(t_ns - before.t_ns) / static_cast<double>(after.t_ns - before.t_ns);
  }
  return interpolate(before.totals, after.totals, std::min(f, 1.0));
}

}  // namespace

WindowMeter::WindowMeter(std::vector<MeteredGpu> gpus, std::chrono::nanoseconds settle_timeout)
    : gpus_(std::move(gpus)), settle_timeout_(settle_timeout), tracks_(gpus_.size()) {}

WindowMeter::Totals WindowMeter::extrapolate(const Track& track, std::int64_t t_ns) {
  Totals totals = track.totals;
  const double dt = static_cast<double>(std::max<std::int64_t>(0, t_ns - track.t_ns)) / 1e9;
  if (!std::isnan(track.power_w)) totals.energy_j += track.power_w * dt;
  if (!std::isnan(track.util_pct)) {
    totals.util_pct_s += track.util_pct * dt;
    totals.util_s += dt;
  }
  if (!std::isnan(track.sm_pct)) {
    totals.sm_pct_s += track.sm_pct * dt;
    totals.sm_s += dt;
  }
  return totals;
}

// The totals at `row`: a value read at a sample stands for the interval that ends there (NVML's
// utilization and GPM's metrics are averages over it); power is integrated by trapezoids; the
// counter, where read, replaces what power gave since its last reading.
void WindowMeter::advance(Track& track, const SampleRow& row) const {
  const double power = value_or_nan(row, Metric::PowerW);
  const double util = value_or_nan(row, Metric::GpuUtilPct);
  const double sm = value_or_nan(row, Metric::SmActivePct);
  const double counter = value_or_nan(row, Metric::EnergyMj);
  if (track.any) {
    const double dt = static_cast<double>(row.mono_ns - track.t_ns) / 1e9;
    if (!std::isnan(power) && !std::isnan(track.power_w)) {
      track.totals.energy_j += 0.5 * (power + track.power_w) * dt;
    }
    if (!std::isnan(util)) {
      track.totals.util_pct_s += util * dt;
      track.totals.util_s += dt;
    }
    if (!std::isnan(sm)) {
      track.totals.sm_pct_s += sm * dt;
      track.totals.sm_s += dt;
    }
  }
  if (!std::isnan(counter)) {
    // A counter that went back (a driver reload) keeps what power gave for that interval.
    if (track.counter_seen && counter >= track.last_counter_mj) {
      track.totals.energy_j =
          track.energy_at_counter_j + (counter - track.last_counter_mj) / 1000.0;
    }
    track.counter_seen = true;
    track.last_counter_mj = counter;
    track.energy_at_counter_j = track.totals.energy_j;
  }
  track.any = true;
  track.t_ns = row.mono_ns;
  track.power_w = power;
  track.util_pct = util;
  track.sm_pct = sm;
}

void WindowMeter::on_sample(const SampleRow& row) {
  std::lock_guard lock(mutex_);
  std::size_t slot = gpus_.size();
  for (std::size_t k = 0; k < gpus_.size(); ++k) {
    if (gpus_[k].index == row.device_index) slot = k;
  }
  if (slot == gpus_.size()) return;
  Track& track = tracks_[slot];
  if (track.any && row.mono_ns <= track.t_ns) return;  // out of order: not a reading to trust
  const Track before = track;
  advance(track, row);
  const double peak =
      std::fmax(value_or_nan(row, Metric::PowerW), value_or_nan(row, Metric::PowerInstantW));
  for (Open& window : open_) update_window(window, slot, before, track, row, peak);
  sampled_.notify_all();
}

// A sample of GPU `slot` (`before` and `after` its track around it) for one open window: the
// window's begin edge, if this is the first sample after it; its peak and count, if the sample
// is inside; its end edge, if the window waits for the sample after its end.
void WindowMeter::update_window(Open& window, std::size_t slot, const Track& before,
                                const Track& after, const SampleRow& row, double peak) {
  if (row.mono_ns <= window.begin_ns) return;
  Edge& begin = window.begin[slot];
  if (!begin.resolved) {
    begin.totals = totals_between(before, after, window.begin_ns);
    begin.resolved = true;
  }
  if (row.mono_ns > window.end_ns) {
    Edge& end = window.end[slot];
    if (!end.resolved) {
      end.totals = totals_between(before, after, window.end_ns);
      end.resolved = true;
    }
    return;
  }
  if (!std::isnan(peak)) {
    const double was = window.peak_w[slot];
    window.peak_w[slot] = std::isnan(was) ? peak : std::fmax(was, peak);
  }
  ++window.samples[slot];
}

void WindowMeter::on_power(const PowerRow& row) {
  (void)row;
}

void WindowMeter::on_event(const Event& event) {
  if (event.kind != EventKind::GpuLost || !event.device_index) return;
  std::lock_guard lock(mutex_);
  for (std::size_t k = 0; k < gpus_.size(); ++k) {
    if (gpus_[k].index == *event.device_index) tracks_[k].lost = true;
  }
}

std::uint64_t WindowMeter::begin(std::string name, std::int64_t now_ns, std::int64_t* at) {
  std::lock_guard lock(mutex_);
  if (open_.size() >= kMaxOpen) return 0;
  if (now_ns == kNow) now_ns = mono_now_ns();
  if (at != nullptr) *at = now_ns;
  Open window;
  window.id = next_id_++;
  window.name = std::move(name);
  window.begin_ns = now_ns;
  window.begin.resize(gpus_.size());
  window.peak_w.assign(gpus_.size(), kNaN);
  window.samples.assign(gpus_.size(), 0);
  open_.push_back(std::move(window));
  return open_.back().id;
}

void WindowMeter::figures_of(const Open& window, std::size_t slot, GpuFigures& out) const {
  const Track& track = tracks_[slot];
  out.index = gpus_[slot].index;
  out.uuid = gpus_[slot].uuid;
  out.samples = window.samples[slot];
  out.peak_power_w = window.peak_w[slot];
  out.lost = track.lost;
  const Edge& begin_edge = window.begin[slot];
  out.estimated = !begin_edge.resolved;
  if (track.lost || !track.any) {
    out.energy_j = out.mean_power_w = out.gpu_util_pct = out.sm_active_pct = kNaN;
    out.energy_source = EnergySource::None;
    return;
  }
  const Totals begin =
      begin_edge.resolved ? begin_edge.totals : extrapolate(track, window.begin_ns);
  const Edge& end_edge = window.end[slot];
  const Totals end = end_edge.resolved ? end_edge.totals : extrapolate(track, window.end_ns);
  const double seconds = static_cast<double>(window.end_ns - window.begin_ns) / 1e9;
  const bool energy = track.counter_seen || !std::isnan(track.power_w);
  out.energy_source = track.counter_seen ? EnergySource::Counter
                      : energy           ? EnergySource::IntegratedPower
                                         : EnergySource::None;
  out.energy_j = energy ? end.energy_j - begin.energy_j : kNaN;
  out.mean_power_w = energy && seconds > 0 ? out.energy_j / seconds : kNaN;
  out.gpu_util_pct = mean_of(end.util_pct_s - begin.util_pct_s, end.util_s - begin.util_s);
  out.sm_active_pct = mean_of(end.sm_pct_s - begin.sm_pct_s, end.sm_s - begin.sm_s);
}

// Every GPU that can still sample has its sample after the window's end.
bool WindowMeter::settled(const Open& window) const {
  for (std::size_t k = 0; k < gpus_.size(); ++k) {
    if (!window.end[k].resolved && !tracks_[k].lost) return false;
  }
  return true;
}

bool WindowMeter::end(std::uint64_t id, std::int64_t now_ns, WindowFigures& out,
                      EndFailure& failure, bool settle) {
  std::unique_lock lock(mutex_);
  if (now_ns == kNow) now_ns = mono_now_ns();
  const auto find = [this, id] {
    return std::find_if(open_.begin(), open_.end(),
                        [id](const Open& window) { return window.id == id; });
  };
  auto it = find();
  if (it == open_.end() || it->end_ns != INT64_MAX) {  // a settled end of it is under way
    failure = id != 0 && id < next_id_ ? EndFailure::AlreadyEnded : EndFailure::UnknownWindow;
    return false;
  }
  it->end_ns = std::max(now_ns, it->begin_ns);
  it->end.assign(gpus_.size(), Edge{});
  if (settle) {
    // Other windows may end meanwhile: the window is found again by its id after the wait.
    sampled_.wait_for(lock, settle_timeout_, [&] { return settled(*find()); });
    it = find();
  }
  out.id = id;
  out.name = it->name;
  out.begin_ns = it->begin_ns;
  out.end_ns = it->end_ns;
  out.seconds = static_cast<double>(out.end_ns - out.begin_ns) / 1e9;
  out.gpus.resize(gpus_.size());
  out.energy_j = 0;
  for (std::size_t k = 0; k < gpus_.size(); ++k) {
    const GpuFigures& gpu = out.gpus[k];
    figures_of(*it, k, out.gpus[k]);
    // The GPUs that report energy (a MIG device's is its GPU's); a lost one makes it unknown.
    if (gpu.lost) out.energy_j = kNaN;
    if (gpu.energy_source != EnergySource::None) out.energy_j += gpu.energy_j;
  }
  open_.erase(it);
  return true;
}

std::size_t WindowMeter::open_windows() const {
  std::lock_guard lock(mutex_);
  return open_.size();
}

}  // namespace gpuscope::capi
