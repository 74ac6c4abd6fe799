// MIG entry points an unprivileged user may call: a GPU's MIG mode, its MIG devices by index, and
// what each MIG device says of its GPU and compute instance (docs/scenarios.md, "MIG").
#include "sim/api.hpp"
#include "sim/driver.hpp"

namespace gpuscope::sim {

nvmlReturn_t DeviceGetMigMode(nvmlDevice_t device, unsigned int* current_mode,
                              unsigned int* pending_mode) {
  return process_driver().device_call(
      Entry::DeviceGetMigMode, device, [&](SimDevice& d, const CallContext& context) {
        if (current_mode == nullptr || pending_mode == nullptr) return nvml::kErrorInvalidArgument;
        const GpuConfig& config = d.model.config();
        const bool enabled = mig_enabled_at(config, context.scenario_ns);
        if (!enabled && mig_profiles(config.spec.model).empty()) return nvml::kErrorNotSupported;
        *current_mode = enabled ? nvml::kDeviceMigEnable : nvml::kDeviceMigDisable;
        *pending_mode = *current_mode;
        return nvml::kSuccess;
      });
}

nvmlReturn_t DeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int* count) {
  return process_driver().device_call(
      Entry::DeviceGetMaxMigDeviceCount, device, [&](SimDevice& d, const CallContext& context) {
        if (count == nullptr) return nvml::kErrorInvalidArgument;
        // 0 when MIG is off or the GPU cannot do it (nvml.h).
        *count = mig_enabled_at(d.model.config(), context.scenario_ns) ? kMaxMigDevices : 0;
        return nvml::kSuccess;
      });
}

nvmlReturn_t DeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                             nvmlDevice_t* mig_device) {
  return process_driver().mig_handle_by_index(device, index, mig_device);
}

namespace {

// Runs fn(const MigInstance&) for a call that only a MIG device's handle answers; a GPU's own
// handle gets `on_gpu` (what a real H200 with MIG off answered: docs/validation.md).
template <class Fn>
nvmlReturn_t on_instance(Entry entry, nvmlDevice_t device, nvmlReturn_t on_gpu, Fn&& fn) {
  return process_driver().instance_call(entry, device,
                                        [&](SimDevice&, MigInstance* instance, const CallContext&) {
                                          return instance == nullptr ? on_gpu : fn(*instance);
                                        });
}

}  // namespace

nvmlReturn_t DeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int* id) {
  return on_instance(Entry::DeviceGetGpuInstanceId, device, nvml::kErrorInvalidArgument,
                     [&](const MigInstance& instance) {
                       if (id == nullptr) return nvml::kErrorInvalidArgument;
                       *id = instance.spec().gpu_instance_id;
                       return nvml::kSuccess;
                     });
}

nvmlReturn_t DeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int* id) {
  return on_instance(Entry::DeviceGetComputeInstanceId, device, nvml::kErrorInvalidArgument,
                     [&](const MigInstance& instance) {
                       if (id == nullptr) return nvml::kErrorInvalidArgument;
                       *id = instance.spec().compute_instance_id;
                       return nvml::kSuccess;
                     });
}

nvmlReturn_t DeviceGetAttributes(nvmlDevice_t device, nvmlDeviceAttributes_t* attributes) {
  return on_instance(Entry::DeviceGetAttributes, device, nvml::kErrorNotSupported,
                     [&](const MigInstance& instance) {
                       if (attributes == nullptr) return nvml::kErrorInvalidArgument;
                       const MigProfile& profile = instance.profile();
                       *attributes = {};
                       attributes->multiprocessorCount = profile.sms;
                       attributes->sharedCopyEngineCount = profile.copy_engines;
                       attributes->sharedDecoderCount = profile.decoders;
                       attributes->sharedEncoderCount = 0;  // MIG instances have no NVENC
                       attributes->sharedJpegCount = profile.jpegs;
                       attributes->sharedOfaCount = profile.ofas;
                       attributes->gpuInstanceSliceCount = profile.compute_slices;
                       attributes->computeInstanceSliceCount =
                           profile.compute_slices;  // one CI spans the GI
                       attributes->memorySizeMB = profile.memory_mib;
                       return nvml::kSuccess;
                     });
}

}  // namespace gpuscope::sim
