// GPM sample objects and metrics. Samples belong to the caller, not to an nvmlInit, so they
// survive nvmlShutdown; the driver keeps a registry to reject pointers it did not hand out.
#include <algorithm>

#include "sim/driver.hpp"
#include "sim/gpm.hpp"

namespace gpuscope::sim {

bool Driver::is_live_sample(nvmlGpmSample_t sample) const {
  return std::find(samples_.begin(), samples_.end(), sample) != samples_.end();
}

nvmlReturn_t Driver::gpm_sample_alloc(nvmlGpmSample_t* sample) {
  return system_call(Entry::GpmSampleAlloc, [&](const Scenario&) {
    if (sample == nullptr) return nvml::kErrorInvalidArgument;
    *sample = new nvmlGpmSample_st{};
    samples_.push_back(*sample);
    return nvml::kSuccess;
  });
}

nvmlReturn_t Driver::gpm_sample_free(nvmlGpmSample_t sample) {
  std::lock_guard lock(mutex_);
  const auto it = std::find(samples_.begin(), samples_.end(), sample);
  if (it == samples_.end()) return nvml::kErrorInvalidArgument;
  samples_.erase(it);
  delete sample;
  return nvml::kSuccess;
}

nvmlReturn_t Driver::gpm_sample_get(nvmlDevice_t handle, nvmlGpmSample_t sample) {
  return instance_call(Entry::GpmSampleGet, handle,
                       [&](SimDevice& device, MigInstance* instance, const CallContext& context) {
                         if (!is_live_sample(sample)) return nvml::kErrorInvalidArgument;
                         if (!device.model.config().spec.gpm) return nvml::kErrorNotSupported;
                         sample->taken = true;
                         sample->device = device.handle.index;
                         sample->instance = instance;
                         sample->generation = generation_;
                         // A MIG device's sample is its compute instance's, which spans its GPU
                         // instance here.
                         sample->time_ns =
                             instance != nullptr ? context.scenario_ns : device.model.time_ns();
                         sample->integral = instance != nullptr ? instance->activity_integral()
                                                                : device.model.activity_integral();
                         return nvml::kSuccess;
                       });
}

nvmlReturn_t Driver::gpm_mig_sample_get(nvmlDevice_t handle, unsigned int gpu_instance_id,
                                        nvmlGpmSample_t sample) {
  constexpr Entry kEntry = Entry::GpmMigSampleGet;
  return device_call(kEntry, handle, [&](SimDevice& device, const CallContext& context) {
    const std::size_t gpu = device.handle.index;
    if (!is_live_sample(sample)) return nvml::kErrorInvalidArgument;
    if (!device.model.config().spec.gpm) return nvml::kErrorNotSupported;
    if (!mig_enabled_at(device.model.config(), context.scenario_ns)) {
      return fail_call(nvml::kErrorInvalidArgument, kEntry, "MIG mode is off", gpu);
    }
    for (MigInstance& instance : device.instances) {
      if (instance.spec().gpu_instance_id != gpu_instance_id) continue;
      if (!instance.live_at(context.scenario_ns)) continue;
      instance.advance_to(context.scenario_ns);
      sample->taken = true;
      sample->device = gpu;
      sample->instance = &instance;
      sample->generation = generation_;
      sample->time_ns = context.scenario_ns;
      sample->integral = instance.activity_integral();
      return nvml::kSuccess;
    }
    return fail_call(nvml::kErrorNotFound, kEntry, "no GPU instance with that id now", gpu);
  });
}

nvmlReturn_t Driver::gpm_metrics_get(nvmlGpmMetricsGet_t* request) {
  return system_call(Entry::GpmMetricsGet, [&](const Scenario&) {
    if (request == nullptr) return nvml::kErrorInvalidArgument;
    if (request->version != nvml::kGpmMetricsGetVersion) {
      return nvml::kErrorArgumentVersionMismatch;
    }
    const nvmlGpmSample_t first = request->sample1;
    const nvmlGpmSample_t second = request->sample2;
    if (!is_live_sample(first) || !is_live_sample(second) || !first->taken || !second->taken) {
      return fail(nvml::kErrorInvalidArgument, "nvmlGpmMetricsGet: a sample was never taken");
    }
    if (first->device != second->device || first->instance != second->instance ||
        first->generation != generation_ || second->generation != generation_) {
      return fail(nvml::kErrorInvalidArgument,
                  "nvmlGpmMetricsGet: the samples come from different devices, MIG instances or "
                  "nvmlInits");
    }
    const SimDevice& device = *devices_[first->device];
    if (!device.model.config().spec.gpm) return nvml::kErrorNotSupported;
    if (request->numMetrics > NVML_GPM_METRIC_MAX) return nvml::kErrorInvalidArgument;
    // The real driver also computes over intervals shorter than its 100 ms refresh; only an
    // empty or reversed interval has no average.
    if (second->time_ns <= first->time_ns) {
      return fail(nvml::kErrorInvalidArgument,
                  "nvmlGpmMetricsGet: sample2 must be taken after sample1");
    }
    for (unsigned int i = 0; i < request->numMetrics; ++i) {
      compute_gpm_metric(*first, *second, request->metrics[i]);
    }
    return nvml::kSuccess;
  });
}

}  // namespace gpuscope::sim
