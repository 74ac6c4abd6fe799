// The latest reading of every sampled GPU, kept for readers that must never wait on NVML: the
// monitor's table and the Prometheus server read a copy; the sampler's threads write it.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "collect/sink.hpp"
#include "export/gpu_identity.hpp"

namespace gpuscope::exporter {

// One GPU's latest values. Metrics a tick left absent (GPM between its 100 ms windows) keep their
// previous value; metrics the GPU never reported stay absent.
struct GpuReading {
  GpuIdentity identity;
  SampleRow latest;                       // present bits say which values are known
  std::optional<double> first_energy_mj;  // the counter at the first sample: energy since start
  std::int64_t samples = 0;
  bool lost = false;

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
  void on_event(const Event& event) override;

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
