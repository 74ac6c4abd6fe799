#include "exporter/latest_values.hpp"

#include "collect/dcgm_feed.hpp"
#include "core/clock.hpp"
#include "core/event_kinds.hpp"
#include "core/xid_catalog.hpp"

namespace gpuscope::exporter {

std::optional<double> GpuReading::energy_since_start_j() const {
  const auto now = latest.get(Metric::EnergyMj);
  if (!now || !first_energy_mj) return std::nullopt;
  return (*now - *first_energy_mj) / 1000.0;
}

LatestValues::LatestValues(std::vector<GpuIdentity> gpus) {
  gpus_.reserve(gpus.size());
  for (auto& identity : gpus) {
    GpuReading reading;
    reading.latest.device_index = identity.index;
    reading.identity = std::move(identity);
    gpus_.push_back(std::move(reading));
  }
}

GpuReading* LatestValues::find(unsigned device_index) {
  for (auto& gpu : gpus_) {
    if (gpu.identity.index == device_index) return &gpu;
  }
  return nullptr;
}

void LatestValues::on_sample(const SampleRow& row) {
  {
    std::lock_guard lock(mutex_);
    GpuReading* gpu = find(row.device_index);
    if (gpu == nullptr) return;
    SampleRow& latest = gpu->latest;
    latest.wall_ns = row.wall_ns;
    latest.mono_ns = row.mono_ns;
    for (std::size_t i = 0; i < kMetricCount; ++i) {
      if (row.present.test(i)) latest.values[i] = row.values[i];
    }
    latest.present |= row.present;
    // FLOP activity (docs/analysis.md), derived as analyze derives it: all four pipes or none.
    const auto f64 = latest.get(Metric::Fp64ActivePct), f32 = latest.get(Metric::Fp32ActivePct);
    const auto f16 = latest.get(Metric::Fp16ActivePct),
               tensor = latest.get(Metric::TensorActivePct);
    if (f64 && f32 && f16 && tensor)
      latest.set(Metric::FlopActivePct, *f64 + *f32 + *f16 + *tensor);
    if (!gpu->first_energy_mj) {
      if (auto energy = row.get(Metric::EnergyMj)) gpu->first_energy_mj = energy;
    }
    ++gpu->samples;
  }
  version_.fetch_add(1, std::memory_order_release);
}

void LatestValues::on_power(const PowerRow& row) {
  {
    std::lock_guard lock(mutex_);
    GpuReading* gpu = find(row.device_index);
    if (gpu == nullptr) return;
    if (row.power_w) gpu->latest.set(Metric::PowerW, *row.power_w);
    if (row.power_instant_w) gpu->latest.set(Metric::PowerInstantW, *row.power_instant_w);
    if (row.energy_mj) {
      gpu->latest.set(Metric::EnergyMj, *row.energy_mj);
      if (!gpu->first_energy_mj) gpu->first_energy_mj = row.energy_mj;
    }
  }
  version_.fetch_add(1, std::memory_order_release);
}

void LatestValues::on_event(const Event& event) {
  if (!event.device_index) return;
  if (event.kind != EventKind::GpuLost && event.kind != EventKind::MetricsSource &&
      event.kind != EventKind::Xid)
    return;
  {
    std::lock_guard lock(mutex_);
    GpuReading* gpu = find(*event.device_index);
    if (gpu == nullptr) return;
    if (event.kind == EventKind::GpuLost) {
      gpu->lost = true;
    } else if (event.kind == EventKind::Xid) {
      constexpr unsigned kUnnamedXid = 999;  // NVML's eventData for an Xid it does not know
      gpu->last_xid = xid_from_title(event.detail).value_or(kUnnamedXid);
      ++gpu->xid_events;
    } else {
      // DCGM's counters went away (or came back): the values held are stale until the next
      // sample brings fresh ones, so they are not exported meanwhile.
      for (const auto& mapping : collect::dcgm_mappings()) {
        if (!mapping.fallback) gpu->latest.present.reset(static_cast<std::size_t>(mapping.metric));
      }
    }
  }
  version_.fetch_add(1, std::memory_order_release);
}

void LatestValues::on_health(const HealthRow& row) {
  {
    std::lock_guard lock(mutex_);
    GpuReading* gpu = find(row.device_index);
    if (gpu == nullptr) return;
    HealthRow& health = gpu->health;
    health.device_index = row.device_index;
    health.wall_ns = row.wall_ns;
    health.mono_ns = row.mono_ns;
    for (std::size_t i = 0; i < kHealthMetricCount; ++i) {
      if (row.present.test(i)) health.values[i] = row.values[i];
    }
    health.present |= row.present;
    ++gpu->health_rows;
    const auto tx = row.get(HealthMetric::NvlinkTxKib), rx = row.get(HealthMetric::NvlinkRxKib);
    if (tx && rx) {
      const double kib = *tx + *rx;
      const double seconds = static_cast<double>(row.mono_ns - gpu->nvlink_last_mono_ns) / 1e9;
      const bool rate = gpu->nvlink_last_kib && kib >= *gpu->nvlink_last_kib && seconds > 0;
      gpu->nvlink_kib_per_s = rate ? (kib - *gpu->nvlink_last_kib) / seconds : 0.0;
      gpu->nvlink_last_kib = kib;
      gpu->nvlink_last_mono_ns = row.mono_ns;
    }
  }
  version_.fetch_add(1, std::memory_order_release);
}

Snapshot LatestValues::snapshot() const {
  Snapshot snapshot;
  snapshot.taken_wall_ns = wall_now_ns();
  std::lock_guard lock(mutex_);
  snapshot.version = version_.load(std::memory_order_acquire);
  snapshot.gpus = gpus_;
  return snapshot;
}

}  // namespace gpuscope::exporter
