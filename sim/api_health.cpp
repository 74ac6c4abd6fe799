// Health entry points: ECC, remapped rows, retired pages, PCIe replays, the video
// engines' utilization and events. A GPU without health faults answers as the healthy H200 of
// tests/fixtures/h200-580 does; the scenario's "health" steps raise the counters (sim/health.hpp).
// The counters answer on a MIG device's handle as on its GPU's (docs/scenarios.md).
#include "sim/api.hpp"
#include "sim/driver.hpp"
#include "sim/health.hpp"

namespace gpuscope::sim {

// Row remapping came with Ampere and needs ECC memory; NOT_SUPPORTED when MIG is enabled with
// instances (nvml.h): on the MIG devices and on their GPU.
bool remapped_rows_supported(const SimDevice& device, bool mig) {
  const GpuConfig& config = device.model.config();
  return config.spec.architecture >= nvml::kArchAmpere && config.spec.ecc && !mig &&
         !mig_enabled(config);
}

// Before Ampere ECC errors retire pages; Ampere and newer remap rows instead (nvidia-smi shows
// N/A on the H200).
bool retired_pages_supported(const GpuSpec& spec) {
  return spec.architecture < nvml::kArchAmpere && spec.ecc;
}

// The event types a GPU reports: all of them, less the ECC ones without ECC memory.
unsigned long long supported_event_types(const GpuSpec& spec) {
  constexpr unsigned long long ecc_types =
      nvml::kEventTypeSingleBitEccError | nvml::kEventTypeDoubleBitEccError |
      nvml::kEventTypeSingleBitEccErrorStorm | nvml::kEventTypeDramRetirementEvent |
      nvml::kEventTypeDramRetirementFailure;
  return spec.ecc ? nvml::kEventTypeAll : nvml::kEventTypeAll & ~ecc_types;
}

namespace {

HealthCounters health_now(const SimDevice& device, const CallContext& context) {
  return health_at(device.model.config().faults.health, context.scenario_ns);
}

// A made-up but stable physical address for retired page i of a cause on a GPU.
unsigned long long retired_page_address(std::size_t gpu, unsigned cause, unsigned page) {
  return 0x8'0000'0000ULL * (cause + 1ULL) + 0x20'0000ULL * (page + 1ULL) + 0x1000ULL * gpu;
}

// The video engines idle: 0 % over the driver's 100 ms sampling period. Not supported on a GPU
// in MIG mode (nvml.h), nor on a MIG device.
nvmlReturn_t video_utilization(Entry entry, nvmlDevice_t device, unsigned int* percent,
                               unsigned int* sampling_period_us) {
  return process_driver().device_call(entry, device, [&](SimDevice& d, const CallContext&) {
    if (percent == nullptr || sampling_period_us == nullptr) return nvml::kErrorInvalidArgument;
    if (mig_enabled(d.model.config())) return nvml::kErrorNotSupported;
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
  return process_driver().gpu_or_mig_call(Entry::DeviceGetEccMode, device,
                                          [&](SimDevice& d, const CallContext&, bool) {
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
  return process_driver().gpu_or_mig_call(
      Entry::DeviceGetTotalEccErrors, device, [&](SimDevice& d, const CallContext& context, bool) {
        if (count == nullptr || error_type > nvml::kMemoryErrorUncorrected ||
            counter_type > nvml::kAggregateEcc) {
          return nvml::kErrorInvalidArgument;
        }
        const GpuConfig& config = d.model.config();
        if (!config.spec.ecc) return nvml::kErrorNotSupported;
        const HealthCounters health = health_now(d, context);
        const bool corrected = error_type == nvml::kMemoryErrorCorrected;
        *count = corrected ? health.ecc_corrected : health.ecc_uncorrected;
        // Aggregate: lifetime, what the GPU had before the scenario plus the volatile count.
        if (counter_type == nvml::kAggregateEcc) {
          *count += corrected ? config.ecc_aggregate_start.corrected
                              : config.ecc_aggregate_start.uncorrected;
        }
        return nvml::kSuccess;
      });
}

nvmlReturn_t DeviceGetRemappedRows(nvmlDevice_t device, unsigned int* corrected,
                                   unsigned int* uncorrected, unsigned int* pending,
                                   unsigned int* failure) {
  return process_driver().gpu_or_mig_call(Entry::DeviceGetRemappedRows, device,
                                          [&](SimDevice& d, const CallContext& context, bool mig) {
                                            if (corrected == nullptr || uncorrected == nullptr ||
                                                pending == nullptr || failure == nullptr) {
                                              return nvml::kErrorInvalidArgument;
                                            }
                                            if (!remapped_rows_supported(d, mig))
                                              return nvml::kErrorNotSupported;
                                            const HealthCounters health = health_now(d, context);
                                            *corrected = health.remapped_correctable;
                                            *uncorrected = health.remapped_uncorrectable;
                                            *pending = health.remap_pending ? 1U : 0U;
                                            *failure = health.remap_failure ? 1U : 0U;
                                            return nvml::kSuccess;
                                          });
}

nvmlReturn_t DeviceGetRetiredPages(nvmlDevice_t device, unsigned int cause, unsigned int* count,
                                   unsigned long long* addresses) {
  return process_driver().gpu_or_mig_call(
      Entry::DeviceGetRetiredPages, device, [&](SimDevice& d, const CallContext& context, bool) {
        if (count == nullptr || cause > nvml::kPageRetirementDoubleBitEcc) {
          return nvml::kErrorInvalidArgument;
        }
        if (!retired_pages_supported(d.model.config().spec)) return nvml::kErrorNotSupported;
        const HealthCounters health = health_now(d, context);
        const unsigned pages =
            cause == nvml::kPageRetirementDoubleBitEcc ? health.retired_dbe : health.retired_sbe;
        // Too small a buffer (0 asks for the size): the count needed, as the real call does.
        if (*count < pages) {
          *count = pages;
          return nvml::kErrorInsufficientSize;
        }
        if (pages > 0 && addresses == nullptr) return nvml::kErrorInvalidArgument;
        for (unsigned i = 0; i < pages; ++i) {
          addresses[i] = retired_page_address(d.handle.index, cause, i);
        }
        *count = pages;
        return nvml::kSuccess;
      });
}

nvmlReturn_t DeviceGetPcieReplayCounter(nvmlDevice_t device, unsigned int* value) {
  return process_driver().gpu_or_mig_call(Entry::DeviceGetPcieReplayCounter, device,
                                          [&](SimDevice& d, const CallContext& context, bool) {
                                            if (value == nullptr)
                                              return nvml::kErrorInvalidArgument;
                                            *value = health_now(d, context).pcie_replays;
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
