#include "nvml/gpm.hpp"

#include <algorithm>

namespace gpuscope::nvml {

Expected<GpmSample> GpmSample::allocate(std::shared_ptr<const Library> library) {
  nvmlGpmSample_t sample = nullptr;
  auto status = library->call(&FunctionTable::GpmSampleAlloc, &sample);
  if (!status) return tl::unexpected(status.error());
  return GpmSample(std::move(library), sample);
}

GpmSample::GpmSample(GpmSample&& other) noexcept
    : library_(std::move(other.library_)), sample_(std::exchange(other.sample_, nullptr)) {}

GpmSample& GpmSample::operator=(GpmSample&& other) noexcept {
  if (this != &other) {
    if (sample_ != nullptr) (void)library_->call(&FunctionTable::GpmSampleFree, sample_);
    library_ = std::move(other.library_);
    sample_ = std::exchange(other.sample_, nullptr);
  }
  return *this;
}

GpmSample::~GpmSample() {
  // Nothing useful can be done if freeing fails at teardown; the driver reclaims it at shutdown.
  if (sample_ != nullptr) (void)library_->call(&FunctionTable::GpmSampleFree, sample_);
}

Status GpmSample::take(const Device& device) {
  return library_->call(&FunctionTable::GpmSampleGet, device.handle(), sample_);
}

Status GpmSample::take_mig(const Device& gpu, unsigned gpu_instance_id) {
  return library_->call(&FunctionTable::GpmMigSampleGet, gpu.handle(), gpu_instance_id, sample_);
}

GpmQuery::GpmQuery(std::shared_ptr<const Library> library, std::span<const unsigned> metric_ids)
    : library_(std::move(library)), request_(std::make_unique<nvmlGpmMetricsGet_t>()) {
  count_ = static_cast<unsigned>(std::min<std::size_t>(metric_ids.size(), NVML_GPM_METRIC_MAX));
  for (unsigned i = 0; i < count_; ++i) request_->metrics[i].metricId = metric_ids[i];
}

Status GpmQuery::compute(const GpmSample& earlier, const GpmSample& later,
                         std::span<std::optional<double>> out) {
  nvmlGpmMetricsGet_t& request = *request_;
  request.version = kGpmMetricsGetVersion;
  request.numMetrics = count_;
  request.sample1 = earlier.get();
  request.sample2 = later.get();
  auto status = library_->call(&FunctionTable::GpmMetricsGet, &request);
  if (!status) return status;
  const std::size_t n = std::min<std::size_t>(out.size(), count_);
  for (std::size_t i = 0; i < n; ++i) {
    const nvmlGpmMetric_t& metric = request.metrics[i];
    out[i] = metric.nvmlReturn == kSuccess ? std::optional<double>(metric.value) : std::nullopt;
  }
  return {};
}

}  // namespace gpuscope::nvml
