#include "sim/gpu_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "nvml/abi.hpp"
#include "sim/noise.hpp"
#include "sim/power_model.hpp"

namespace gpuscope::sim {
namespace {

// Noise streams besides the activity metrics (which use their Activity index).
constexpr std::size_t kNoisePower = kActivityCount;
constexpr std::size_t kNoiseIdlePower = kActivityCount + 1;
constexpr std::size_t kNoiseCap = kActivityCount + 2;
constexpr std::size_t kNoiseSetup = kActivityCount + 3;

Levels scaled_levels(const Phase& phase, double activity_scale) {
  Levels levels = phase.levels;
  for (std::size_t m = 0; m < kActivityCount; ++m) {
    levels[m] *= activity_scale;
    if (is_percentage(static_cast<Activity>(m))) levels[m] = std::min(levels[m], 100.0);
  }
  return levels;
}

Levels lerp(const Levels& from, const Levels& to, double fraction) {
  Levels out{};
  for (std::size_t m = 0; m < kActivityCount; ++m) out[m] = from[m] + (to[m] - from[m]) * fraction;
  return out;
}

std::size_t find_steady_phase(const std::vector<Phase>& phases) {
  for (std::size_t p = 0; p < phases.size(); ++p) {
    if (phases[p].name == "compute") return p;
  }
  const auto longest =
      std::max_element(phases.begin(), phases.end(),
                       [](const auto& a, const auto& b) { return a.duration_s < b.duration_s; });
  return static_cast<std::size_t>(longest - phases.begin());
}

}  // namespace

GpuModel::GpuModel(const GpuConfig& config, std::uint64_t seed, std::size_t index,
                   unsigned initial_limit_mw, LockedClocks initial_lock)
    : config_(config),
      seed_(seed),
      index_(index),
      timeline_(config.phases),
      lock_(initial_lock),
      active_lock_(initial_lock) {
  const PowerSpec& power = config_.spec.power;
  for (const Phase& phase : config_.phases) {
    phase_levels_.push_back(scaled_levels(phase, config_.activity_scale));
    phase_demand_w_.push_back(
        demanded_power_w(power, phase_levels_.back(), phase.power_w, config_.activity_scale));
  }
  steady_phase_ = find_steady_phase(config_.phases);
  thermal_decay_ = std::exp(-kBucketSeconds / config_.spec.thermal.tau_s);
  limit_mw_ = initial_limit_mw != 0 ? initial_limit_mw
                                    : static_cast<unsigned>(std::lround(power.default_w * 1000.0));
  active_cap_mw_ = limit_mw_;
  temperature_c_ = config_.spec.thermal.idle_c;

  // The counters start where a driver that has been up for 2 to 12 days would have them.
  const auto setup = [&](std::uint64_t key) {
    return unit_uniform(hash_keys(seed_, index_, key, kNoiseSetup));
  };
  const double uptime_s = (2.0 + 10.0 * setup(1)) * 86400.0;
  energy_offset_mj_ = static_cast<unsigned long long>(power.idle_w * uptime_s * 1000.0);
  pcie_offset_bytes_ = {static_cast<unsigned long long>(setup(2) * 1e13),
                        static_cast<unsigned long long>(setup(3) * 1e13)};
  enter_bucket(0);
}

void GpuModel::advance_to(std::int64_t t_ns) {
  if (t_ns <= time_ns_) return;
  const std::int64_t target_bucket = t_ns / kBucketNs;
  while (bucket_.index < target_bucket) {
    finish_bucket();
    enter_bucket(bucket_.index + 1);
  }
  time_ns_ = t_ns;
}

void GpuModel::set_power_limit(unsigned milliwatts, std::int64_t effective_ns) {
  limit_mw_ = milliwatts;
  const auto it = std::upper_bound(
      pending_.begin(), pending_.end(), effective_ns,
      [](std::int64_t t, const PendingLimit& pending) { return t < pending.effective_ns; });
  pending_.insert(it, {effective_ns, milliwatts});
}

void GpuModel::set_locked_clocks(LockedClocks lock, std::int64_t effective_ns) {
  lock_ = lock;
  const auto it = std::upper_bound(
      pending_locks_.begin(), pending_locks_.end(), effective_ns,
      [](std::int64_t t, const PendingLock& pending) { return t < pending.effective_ns; });
  pending_locks_.insert(it, {effective_ns, lock});
}

double GpuModel::lock_speed(LockedClocks lock) const {
  if (!lock.locked()) return 1.0;
  const double fraction =
      static_cast<double>(lock.max_mhz) / static_cast<double>(config_.spec.clocks.max_sm_mhz);
  return std::clamp(fraction, kMinSpeed, 1.0);
}

double GpuModel::noise(std::size_t metric) const {
  return standard_noise(seed_, index_, static_cast<std::uint64_t>(bucket_.index), metric);
}

double GpuModel::thermal_speed() const {
  const ThermalSpec& thermal = config_.spec.thermal;
  if (temperature_c_ >= thermal.hw_slowdown_c) return 0.6;
  if (temperature_c_ >= thermal.slowdown_c) return 0.85;
  return 1.0;
}

void GpuModel::enter_bucket(std::int64_t index) {
  bucket_.index = index;
  const std::int64_t start_ns = index * kBucketNs;
  while (!pending_.empty() && pending_.front().effective_ns <= start_ns) {
    active_cap_mw_ = pending_.front().milliwatts;
    pending_.erase(pending_.begin());
  }
  while (!pending_locks_.empty() && pending_locks_.front().effective_ns <= start_ns) {
    active_lock_ = pending_locks_.front().lock;
    pending_locks_.erase(pending_locks_.begin());
  }
  const PowerSpec& power = config_.spec.power;
  const double cap_w = active_cap_mw_ / 1000.0;
  const double thermal_limit = thermal_speed();
  const double locked_limit = lock_speed(active_lock_);
  const double speed_limit = std::min(thermal_limit, locked_limit);
  bucket_work_ = work_;
  bucket_.phase = phase_;
  bucket_.temperature_c = temperature_c_;

  // Walk the bucket in segments that end at phase boundaries, so work crosses them exactly.
  Levels level_time{};
  double demand_time = 0;
  double memory_time = 0;
  double remaining = kBucketSeconds;
  for (int segment = 0; segment < 16 && remaining > 1e-12; ++segment) {
    while (phase_ + 1 < timeline_.size() && work_ >= timeline_.end_of(phase_) - 1e-12) ++phase_;
    const std::size_t previous = phase_ == 0 ? 0 : phase_ - 1;
    const double fraction = timeline_.ramp_fraction(phase_, work_);
    const Levels levels = lerp(phase_levels_[previous], phase_levels_[phase_], fraction);
    const double demand = phase_demand_w_[previous] +
                          (phase_demand_w_[phase_] - phase_demand_w_[previous]) * fraction;
    const double memory =
        config_.phases[previous].memory_used_gib +
        (config_.phases[phase_].memory_used_gib - config_.phases[previous].memory_used_gib) *
            fraction;
    const double speed = std::min(speed_limit, cap_speed(cap_w, demand, power.idle_w));
    const double rate = work_rate(config_.phases[phase_].compute_bound, speed);
    const double dt = std::min(remaining, (timeline_.end_of(phase_) - work_) / rate);
    for (std::size_t m = 0; m < kActivityCount; ++m) level_time[m] += levels[m] * dt;
    demand_time += demand * dt;
    memory_time += memory * dt;
    work_ += rate * dt;
    remaining -= dt;
  }

  const double relative_noise = config_.phases[bucket_.phase].noise;
  for (std::size_t m = 0; m < kActivityCount; ++m) {
    double level = level_time[m] / kBucketSeconds * (1.0 + relative_noise * noise(m));
    level = std::max(level, 0.0);
    if (is_percentage(static_cast<Activity>(m))) level = std::min(level, 100.0);
    bucket_.levels[m] = level;
  }
  bucket_.memory_used_mib = memory_time / kBucketSeconds * 1024.0;
  bucket_.idle = std::lround(bucket_.levels[index_of(Activity::Util)]) == 0;

  // Idle draw wobbles by about 1 %; the dynamic part by the phase's noise.
  const double idle_w = power.idle_w * (1.0 + 0.01 * noise(kNoiseIdlePower));
  const double demand_w = idle_w + (demand_time / kBucketSeconds - power.idle_w) *
                                       (1.0 + relative_noise * noise(kNoisePower));
  const double cap_limited = cap_speed(cap_w, demand_w, idle_w);
  bucket_.speed = std::min(speed_limit, cap_limited);
  bucket_.cap_bound = cap_limited < speed_limit;
  bucket_.clock_locked = !bucket_.cap_bound && locked_limit < thermal_limit;
  double power_w = power_at_speed(demand_w, idle_w, bucket_.speed);
  if (bucket_.cap_bound) {
    // Power capping holds the average at the cap, with a little jitter: at most +0.8 %.
    power_w = cap_w * (1.0 + 0.004 * std::clamp(noise(kNoiseCap), -2.5, 2.0));
  }
  bucket_.power_mw = static_cast<unsigned>(std::lround(std::max(power_w, 0.0) * 1000.0));

  recent_power_mw_[static_cast<std::size_t>(index) % recent_power_mw_.size()] = bucket_.power_mw;
  recent_count_ = std::min(recent_count_ + 1, recent_power_mw_.size());
}

void GpuModel::finish_bucket() {
  for (std::size_t m = 0; m < kActivityCount; ++m) {
    integral_at_bucket_[m] += bucket_.levels[m] * kBucketSeconds;
  }
  for (std::size_t v = 0; v < kViolationCount; ++v) {
    if (in_violation(static_cast<Violation>(v))) violation_ns_at_bucket_[v] += kBucketNs;
  }
  // mW * 100 ms = 100 µJ: integer, so the energy counter is exact.
  energy_uj_at_bucket_ += std::uint64_t{bucket_.power_mw} * 100U;
  const ThermalSpec& thermal = config_.spec.thermal;
  const double power_w = bucket_.power_mw / 1000.0;
  const double target = thermal.idle_c + thermal.c_per_w * (power_w - config_.spec.power.idle_w);
  temperature_c_ = target + (temperature_c_ - target) * thermal_decay_;
}

unsigned GpuModel::power_average_mw() const {
  unsigned long long sum = 0;
  for (std::size_t i = 0; i < recent_count_; ++i) sum += recent_power_mw_[i];
  return static_cast<unsigned>(sum / std::max<std::size_t>(recent_count_, 1));
}

unsigned GpuModel::power_usage_mw() const {
  return config_.spec.power_usage_mode == PowerUsageMode::LatestBucket ? bucket_.power_mw
                                                                       : power_average_mw();
}

std::uint64_t GpuModel::energy_uj() const {
  const auto into_bucket = static_cast<std::uint64_t>(time_ns_ - bucket_.index * kBucketNs);
  return energy_uj_at_bucket_ + std::uint64_t{bucket_.power_mw} * into_bucket / 1'000'000U;
}

unsigned long long GpuModel::energy_mj() const {
  if (time_scale_ == 1.0) return energy_offset_mj_ + energy_uj() / 1000U;  // exact
  return energy_offset_mj_ +
         static_cast<unsigned long long>(static_cast<double>(energy_uj()) / (1000.0 * time_scale_));
}

Levels GpuModel::activity_integral() const {
  const double into_bucket = static_cast<double>(time_ns_ - bucket_.index * kBucketNs) / 1e9;
  Levels integral = integral_at_bucket_;
  for (std::size_t m = 0; m < kActivityCount; ++m) integral[m] += bucket_.levels[m] * into_bucket;
  return integral;
}

unsigned long long GpuModel::pcie_bytes(Activity direction) const {
  const std::size_t slot = direction == Activity::PcieTx ? 0 : 1;
  const double mib = activity_integral()[index_of(direction)];
  return pcie_offset_bytes_[slot] + static_cast<unsigned long long>(mib * 1048576.0);
}

bool GpuModel::in_violation(Violation reason) const {
  const ThermalSpec& thermal = config_.spec.thermal;
  switch (reason) {
    case Violation::PowerCap:
      return bucket_.cap_bound;
    case Violation::SwThermal:
      return bucket_.temperature_c >= thermal.slowdown_c;
    case Violation::HwThermal:
      return bucket_.temperature_c >= thermal.hw_slowdown_c;
    case Violation::LowUtilization:
      return bucket_.idle;
    case Violation::Count:
      break;
  }
  return false;
}

unsigned long long GpuModel::violation_ns(Violation reason) const {
  std::int64_t scenario_ns = violation_ns_at_bucket_[static_cast<std::size_t>(reason)];
  if (in_violation(reason)) scenario_ns += time_ns_ - bucket_.index * kBucketNs;
  if (time_scale_ == 1.0) return static_cast<unsigned long long>(scenario_ns);
  return static_cast<unsigned long long>(
      std::llround(static_cast<double>(scenario_ns) / time_scale_));
}

unsigned GpuModel::sm_clock_mhz() const {
  const ClockSpec& clocks = config_.spec.clocks;
  // A locked minimum keeps the clock up between kernels (clamped to what the load allows).
  if (bucket_.idle)
    return std::max(clocks.idle_sm_mhz, std::min(active_lock_.min_mhz, clocks.max_sm_mhz));
  return std::max(clocks.idle_sm_mhz,
                  static_cast<unsigned>(std::lround(clocks.max_sm_mhz * bucket_.speed)));
}

unsigned long long GpuModel::clocks_event_reasons() const {
  unsigned long long reasons = 0;
  if (bucket_.idle) reasons |= nvml::kClocksEventGpuIdle;
  if (bucket_.cap_bound) reasons |= nvml::kClocksEventSwPowerCap;
  if (bucket_.clock_locked && !bucket_.idle) reasons |= nvml::kClocksEventApplicationsClocksSetting;
  const ThermalSpec& thermal = config_.spec.thermal;
  if (bucket_.temperature_c >= thermal.slowdown_c) reasons |= nvml::kClocksEventSwThermalSlowdown;
  if (bucket_.temperature_c >= thermal.hw_slowdown_c) {
    reasons |= nvml::kClocksEventHwThermalSlowdown | nvml::kClocksEventHwSlowdown;
  }
  return reasons;
}

double GpuModel::steady_speed(unsigned cap_mw, unsigned lock_max_mhz) const {
  const double speed = std::min(
      lock_speed({0, lock_max_mhz}),
      cap_speed(cap_mw / 1000.0, phase_demand_w_[steady_phase_], config_.spec.power.idle_w));
  return work_rate(config_.phases[steady_phase_].compute_bound, speed);
}

}  // namespace gpuscope::sim
