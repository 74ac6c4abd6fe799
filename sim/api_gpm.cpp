// GPM entry points (Hopper and newer).
#include "sim/api.hpp"
#include "sim/driver.hpp"

namespace gpuscope::sim {

nvmlReturn_t GpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t* support) {
  // Answers for a MIG device's handle as for its GPU (nvml.h: GPU or MIG handle).
  return process_driver().instance_call(
      Entry::GpmQueryDeviceSupport, device, [&](SimDevice& d, MigInstance*, const CallContext&) {
        if (support == nullptr) return nvml::kErrorInvalidArgument;
        if (support->version != nvml::kGpmSupportVersion) {
          return nvml::kErrorArgumentVersionMismatch;
        }
        support->isSupportedDevice = d.model.config().spec.gpm ? 1U : 0U;
        return nvml::kSuccess;
      });
}

nvmlReturn_t GpmSampleAlloc(nvmlGpmSample_t* sample) {
  return process_driver().gpm_sample_alloc(sample);
}

nvmlReturn_t GpmSampleFree(nvmlGpmSample_t sample) {
  return process_driver().gpm_sample_free(sample);
}

nvmlReturn_t GpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t sample) {
  return process_driver().gpm_sample_get(device, sample);
}

nvmlReturn_t GpmMigSampleGet(nvmlDevice_t device, unsigned int gpu_instance_id,
                             nvmlGpmSample_t sample) {
  return process_driver().gpm_mig_sample_get(device, gpu_instance_id, sample);
}

nvmlReturn_t GpmMetricsGet(nvmlGpmMetricsGet_t* metrics) {
  return process_driver().gpm_metrics_get(metrics);
}

}  // namespace gpuscope::sim
