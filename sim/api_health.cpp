// Health entry points (issue 29): ECC, remapped rows, retired pages, PCIe replays, the video
// engines' utilization and events, answered as a healthy H200 does (tests/fixtures/h200-580).
#include "sim/api.hpp"
#include "sim/driver.hpp"

namespace gpuscope::sim {

// The event types a GPU reports: all of them, less the ECC ones without ECC memory.
unsigned long long supported_event_types(const GpuSpec& spec) {
  constexpr unsigned long long ecc_types =
      nvml::kEventTypeSingleBitEccError | nvml::kEventTypeDoubleBitEccError |
      nvml::kEventTypeSingleBitEccErrorStorm | nvml::kEventTypeDramRetirementEvent |
      nvml::kEventTypeDramRetirementFailure;
  return spec.ecc ? nvml::kEventTypeAll : nvml::kEventTypeAll & ~ecc_types;
}

namespace {

// The video engines idle: 0 % over the driver's 100 ms sampling period.
nvmlReturn_t video_utilization(Entry entry, nvmlDevice_t device, unsigned int* percent,
                               unsigned int* sampling_period_us) {
  return process_driver().device_call(entry, device, [&](SimDevice&, const CallContext&) {
    if (percent == nullptr || sampling_period_us == nullptr) return nvml::kErrorInvalidArgument;
    *percent = 0;
    *sampling_period_us = 100000;
    return nvml::kSuccess;
  });
}

}  // namespace

nvmlReturn_t EventSetCreate(nvmlEventSet_t* set) {
  return process_driver().event_set_create(set);
}

nvmlReturn_t DeviceRegisterEvents(nvmlDevice_t device, unsigned long long event_types,
                                  nvmlEventSet_t set) {
  return process_driver().register_events(device, event_types, set);
}

nvmlReturn_t DeviceGetSupportedEventTypes(nvmlDevice_t device, unsigned long long* event_types) {
  return process_driver().device_call(Entry::DeviceGetSupportedEventTypes, device,
                                      [&](SimDevice& d, const CallContext&) {
                                        if (event_types == nullptr)
                                          return nvml::kErrorInvalidArgument;
                                        *event_types = supported_event_types(d.model.config().spec);
                                        return nvml::kSuccess;
                                      });
}

nvmlReturn_t EventSetWait(nvmlEventSet_t set, nvmlEventData_t* data, unsigned int timeout_ms) {
  return process_driver().event_set_wait(set, data, timeout_ms);
}

nvmlReturn_t EventSetFree(nvmlEventSet_t set) {
  return process_driver().event_set_free(set);
}

nvmlReturn_t DeviceGetEccMode(nvmlDevice_t device, unsigned int* current, unsigned int* pending) {
  return process_driver().device_call(Entry::DeviceGetEccMode, device,
                                      [&](SimDevice& d, const CallContext&) {
                                        if (current == nullptr || pending == nullptr)
                                          return nvml::kErrorInvalidArgument;
                                        if (!d.model.config().spec.ecc)
                                          return nvml::kErrorNotSupported;
                                        *current = nvml::kFeatureEnabled;
                                        *pending = nvml::kFeatureEnabled;
                                        return nvml::kSuccess;
                                      });
}

nvmlReturn_t DeviceGetTotalEccErrors(nvmlDevice_t device, unsigned int error_type,
                                     unsigned int counter_type, unsigned long long* count) {
  return process_driver().device_call(
      Entry::DeviceGetTotalEccErrors, device, [&](SimDevice& d, const CallContext&) {
        if (count == nullptr || error_type > nvml::kMemoryErrorUncorrected ||
            counter_type > nvml::kAggregateEcc) {
          return nvml::kErrorInvalidArgument;
        }
        if (!d.model.config().spec.ecc) return nvml::kErrorNotSupported;
        *count = 0;
        return nvml::kSuccess;
      });
}

nvmlReturn_t DeviceGetRemappedRows(nvmlDevice_t device, unsigned int* corrected,
                                   unsigned int* uncorrected, unsigned int* pending,
                                   unsigned int* failure) {
  return process_driver().device_call(Entry::DeviceGetRemappedRows, device,
                                      [&](SimDevice& d, const CallContext&) {
                                        if (corrected == nullptr || uncorrected == nullptr ||
                                            pending == nullptr || failure == nullptr) {
                                          return nvml::kErrorInvalidArgument;
                                        }
                                        // Row remapping came with Ampere and needs ECC memory.
                                        const GpuSpec& spec = d.model.config().spec;
                                        if (spec.architecture < nvml::kArchAmpere || !spec.ecc)
                                          return nvml::kErrorNotSupported;
                                        *corrected = *uncorrected = *pending = *failure = 0;
                                        return nvml::kSuccess;
                                      });
}

nvmlReturn_t DeviceGetRetiredPages(nvmlDevice_t device, unsigned int cause, unsigned int* count,
                                   unsigned long long* addresses) {
  return process_driver().device_call(
      Entry::DeviceGetRetiredPages, device, [&](SimDevice& d, const CallContext&) {
        (void)addresses;  // no page is ever retired here
        if (count == nullptr || cause > nvml::kPageRetirementDoubleBitEcc) {
          return nvml::kErrorInvalidArgument;
        }
        // Ampere and newer remap rows instead (nvidia-smi shows N/A on the H200).
        const GpuSpec& spec = d.model.config().spec;
        if (spec.architecture >= nvml::kArchAmpere || !spec.ecc) return nvml::kErrorNotSupported;
        *count = 0;
        return nvml::kSuccess;
      });
}

nvmlReturn_t DeviceGetPcieReplayCounter(nvmlDevice_t device, unsigned int* value) {
  return process_driver().device_call(Entry::DeviceGetPcieReplayCounter, device,
                                      [&](SimDevice&, const CallContext&) {
                                        if (value == nullptr) return nvml::kErrorInvalidArgument;
                                        *value = 0;
                                        return nvml::kSuccess;
                                      });
}

nvmlReturn_t DeviceGetEncoderUtilization(nvmlDevice_t device, unsigned int* percent,
                                         unsigned int* sampling_period_us) {
  return video_utilization(Entry::DeviceGetEncoderUtilization, device, percent, sampling_period_us);
}

nvmlReturn_t DeviceGetDecoderUtilization(nvmlDevice_t device, unsigned int* percent,
                                         unsigned int* sampling_period_us) {
  return video_utilization(Entry::DeviceGetDecoderUtilization, device, percent, sampling_period_us);
}

}  // namespace gpuscope::sim
