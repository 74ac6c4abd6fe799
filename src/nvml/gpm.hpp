// GPM (GPU Performance Monitoring, Hopper and newer): the saturation metrics DCGM calls
// "profiling" fields, read from plain NVML. Metrics are computed between two samples taken at
// least kGpmMinIntervalSeconds apart.
#pragma once

#include <memory>
#include <optional>
#include <span>

#include "nvml/device.hpp"

namespace gpuscope::nvml {

// An nvmlGpmSample_t owned for its lifetime (freed with nvmlGpmSampleFree).
class GpmSample {
 public:
  static Expected<GpmSample> allocate(std::shared_ptr<const Library> library);
  GpmSample(GpmSample&& other) noexcept;
  GpmSample& operator=(GpmSample&& other) noexcept;
  GpmSample(const GpmSample&) = delete;
  GpmSample& operator=(const GpmSample&) = delete;
  ~GpmSample();

  // Takes a snapshot of `device`'s counters into this sample.
  Status take(const Device& device);
  // Takes a snapshot of one MIG GPU instance's counters (nvmlGpmMigSampleGet): `gpu` is the
  // parent GPU's handle, gpu_instance_id what Device::gpu_instance_id() says of the instance.
  Status take_mig(const Device& gpu, unsigned gpu_instance_id);
  nvmlGpmSample_t get() const { return sample_; }

 private:
  GpmSample(std::shared_ptr<const Library> library, nvmlGpmSample_t sample)
      : library_(std::move(library)), sample_(sample) {}
  std::shared_ptr<const Library> library_;
  nvmlGpmSample_t sample_ = nullptr;
};

// A reusable request for a fixed set of metric ids (the request struct is ~13 KB, so it is
// allocated once, not per sample).
class GpmQuery {
 public:
  GpmQuery(std::shared_ptr<const Library> library, std::span<const unsigned> metric_ids);

  // Computes the metrics between `earlier` and `later`. On success, out[i] is the value of
  // metric_ids[i], or nullopt when the driver reported an error for that metric alone.
  Status compute(const GpmSample& earlier, const GpmSample& later,
                 std::span<std::optional<double>> out);

  std::size_t size() const { return count_; }

 private:
  std::shared_ptr<const Library> library_;
  std::unique_ptr<nvmlGpmMetricsGet_t> request_;
  unsigned count_ = 0;
};

}  // namespace gpuscope::nvml
