// The latest reading of every sampled GPU, kept for readers that must never wait on NVML: the
// monitor's table and the Prometheus server read a copy; the sampler's threads write it.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "collect/sink.hpp"
#include "exporter/gpu_identity.hpp"

namespace gpuscope::exporter {

// One GPU's latest values. Metrics a tick left absent (GPM between its 100 ms windows) keep their
// previous value; metrics the GPU never reported stay absent. The same holds for the health
// counters, read at their own slower cadence.
struct GpuReading {
  GpuIdentity identity;
  SampleRow latest;                       // present bits say which values are known
  std::optional<double> first_energy_mj;  // the counter at the first sample: energy since start
  std::int64_t samples = 0;
  bool lost = false;

  HealthRow health;  // the latest health counters; present bits say which are known
  std::int64_t health_rows = 0;
  unsigned last_xid = 0;        // the number of the last Xid event, 0 before any
  std::int64_t xid_events = 0;  // Xid events since gpuscope started
  // NVLink data (tx + rx) per second between the last two health rows, in KiB/s: DCGM's
  // NVLINK_BANDWIDTH_TOTAL × 1000. 0 after the first row (DCGM's convention) and after the
  // counters went back (a driver reload); absent when the GPU reports no NVLink throughput.
  std::optional<double> nvlink_kib_per_s;
  std::optional<double> nvlink_last_kib;  // tx + rx at the last health row
  std::int64_t nvlink_last_mono_ns = 0;

  // Joules used since the first sample, from the hardware energy counter.
  std::optional<double> energy_since_start_j() const;
};

struct Snapshot {
  std::vector<GpuReading> gpus;  // in sampling order
  std::int64_t version = 0;      // increases with every sample; equal versions, equal content
  std::int64_t taken_wall_ns = 0;
};

class LatestValues : public collect::SampleSink {
 public:
  explicit LatestValues(std::vector<GpuIdentity> gpus);

  void on_sample(const SampleRow& row) override;
  void on_power(const PowerRow& row) override;
  // GPU lost, DCGM's counters gone, and Xids: the number comes from the event's detail, which
  // begins "Xid N" (core/xid_catalog.hpp, xid_title); a detail without one counts as 999, the
  // number NVML gives an Xid it cannot name.
  void on_event(const Event& event) override;
  void on_health(const HealthRow& row) override;

  // A consistent copy of every GPU's latest values (a short lock; never waits on NVML).
  Snapshot snapshot() const;
  std::int64_t version() const { return version_.load(std::memory_order_acquire); }

 private:
  GpuReading* find(unsigned device_index);

  mutable std::mutex mutex_;
  std::vector<GpuReading> gpus_;
  std::atomic<std::int64_t> version_{0};
};

}  // namespace gpuscope::exporter
