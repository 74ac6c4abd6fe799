// The one list of NVML entry points gpuscope uses.
//
// Each entry names a function (the id), whether gpuscope can run without it, its parameter list,
// its argument list, and the exported symbols that implement it, newest first. The loader takes
// the first symbol the library exports (`_v3 -> _v2 -> plain`); only signature-compatible versions
// are listed as fallbacks. The function table (loader), and the simulated library's exports (sim/)
// are both expanded from this list, so the three can never disagree.
//
//   GPUSCOPE_NVML_ENTRY_POINTS(X1, X2, X3)
//     X1(id, requirement, params, args, symbol)
//     X2(id, requirement, params, args, symbol, fallback)
//     X3(id, requirement, params, args, symbol, fallback, fallback2)
//
// requirement is Required (the library is refused without it) or Optional (the feature it serves
// is reported as unsupported). Every function returns nvmlReturn_t except ErrorString.
#pragma once

#include "nvml/abi.hpp"

// clang-format off
#define GPUSCOPE_NVML_ENTRY_POINTS(X1, X2, X3)                                                         \
  /* Library */                                                                                        \
  X2(Init, Required, (), (), nvmlInit_v2, nvmlInit)                                                    \
  X1(Shutdown, Required, (), (), nvmlShutdown)                                                         \
  X1(SystemGetDriverVersion, Optional, (char* version, unsigned int length), (version, length),         \
     nvmlSystemGetDriverVersion)                                                                       \
  X1(SystemGetNvmlVersion, Optional, (char* version, unsigned int length), (version, length),           \
     nvmlSystemGetNVMLVersion)                                                                         \
  X2(SystemGetCudaDriverVersion, Optional, (int* version), (version), nvmlSystemGetCudaDriverVersion_v2,\
     nvmlSystemGetCudaDriverVersion)                                                                   \
  /* Enumeration and identity */                                                                       \
  X2(DeviceGetCount, Required, (unsigned int* count), (count), nvmlDeviceGetCount_v2, nvmlDeviceGetCount)\
  X2(DeviceGetHandleByIndex, Required, (unsigned int index, nvmlDevice_t* device), (index, device),     \
     nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetHandleByIndex)                                        \
  X1(DeviceGetHandleByUUID, Optional, (const char* uuid, nvmlDevice_t* device), (uuid, device),         \
     nvmlDeviceGetHandleByUUID)                                                                        \
  /* MIG: a MIG device's handle (from its MIG- UUID) leads to the GPU it is part of */                 \
  X1(DeviceIsMigDeviceHandle, Optional, (nvmlDevice_t device, unsigned int* is_mig_device),            \
     (device, is_mig_device), nvmlDeviceIsMigDeviceHandle)                                             \
  X1(DeviceGetDeviceHandleFromMigDeviceHandle, Optional,                                               \
     (nvmlDevice_t mig_device, nvmlDevice_t* device), (mig_device, device),                            \
     nvmlDeviceGetDeviceHandleFromMigDeviceHandle)                                                     \
  /* MIG without privileges: mode, the MIG devices by index, their instance ids and resources */     \
  X1(DeviceGetMigMode, Optional, (nvmlDevice_t device, unsigned int* current_mode,                     \
     unsigned int* pending_mode), (device, current_mode, pending_mode), nvmlDeviceGetMigMode)          \
  X1(DeviceGetMaxMigDeviceCount, Optional, (nvmlDevice_t device, unsigned int* count),                 \
     (device, count), nvmlDeviceGetMaxMigDeviceCount)                                                  \
  X1(DeviceGetMigDeviceHandleByIndex, Optional, (nvmlDevice_t device, unsigned int index,              \
     nvmlDevice_t* mig_device), (device, index, mig_device), nvmlDeviceGetMigDeviceHandleByIndex)      \
  X1(DeviceGetGpuInstanceId, Optional, (nvmlDevice_t device, unsigned int* id), (device, id),          \
     nvmlDeviceGetGpuInstanceId)                                                                       \
  X1(DeviceGetComputeInstanceId, Optional, (nvmlDevice_t device, unsigned int* id), (device, id),      \
     nvmlDeviceGetComputeInstanceId)                                                                   \
  X1(DeviceGetAttributes, Optional, (nvmlDevice_t device, nvmlDeviceAttributes_t* attributes),         \
     (device, attributes), nvmlDeviceGetAttributes_v2)                                                 \
  X1(DeviceGetName, Optional, (nvmlDevice_t device, char* name, unsigned int length),                  \
     (device, name, length), nvmlDeviceGetName)                                                        \
  X1(DeviceGetUUID, Optional, (nvmlDevice_t device, char* uuid, unsigned int length),                  \
     (device, uuid, length), nvmlDeviceGetUUID)                                                        \
  X2(DeviceGetPciInfo, Optional, (nvmlDevice_t device, nvmlPciInfo_t* pci), (device, pci),             \
     nvmlDeviceGetPciInfo_v3, nvmlDeviceGetPciInfo_v2)                                                 \
  X1(DeviceGetArchitecture, Optional, (nvmlDevice_t device, unsigned int* arch), (device, arch),       \
     nvmlDeviceGetArchitecture)                                                                        \
  X1(DeviceGetCudaComputeCapability, Optional, (nvmlDevice_t device, int* major, int* minor),          \
     (device, major, minor), nvmlDeviceGetCudaComputeCapability)                                       \
  X1(DeviceGetMemoryInfo, Optional, (nvmlDevice_t device, nvmlMemory_t* memory), (device, memory),     \
     nvmlDeviceGetMemoryInfo)                                                                          \
  X1(DeviceGetMemoryInfoV2, Optional, (nvmlDevice_t device, nvmlMemory_v2_t* memory), (device, memory),\
     nvmlDeviceGetMemoryInfo_v2)                                                                       \
  /* Power and energy */                                                                               \
  X1(DeviceGetPowerUsage, Optional, (nvmlDevice_t device, unsigned int* milliwatts),                   \
     (device, milliwatts), nvmlDeviceGetPowerUsage)                                                    \
  X1(DeviceGetTotalEnergyConsumption, Optional, (nvmlDevice_t device, unsigned long long* millijoules), \
     (device, millijoules), nvmlDeviceGetTotalEnergyConsumption)                                       \
  X1(DeviceGetEnforcedPowerLimit, Optional, (nvmlDevice_t device, unsigned int* milliwatts),           \
     (device, milliwatts), nvmlDeviceGetEnforcedPowerLimit)                                            \
  X1(DeviceGetPowerManagementLimit, Optional, (nvmlDevice_t device, unsigned int* milliwatts),         \
     (device, milliwatts), nvmlDeviceGetPowerManagementLimit)                                          \
  X1(DeviceGetPowerManagementDefaultLimit, Optional, (nvmlDevice_t device, unsigned int* milliwatts),  \
     (device, milliwatts), nvmlDeviceGetPowerManagementDefaultLimit)                                   \
  X1(DeviceGetPowerManagementLimitConstraints, Optional,                                               \
     (nvmlDevice_t device, unsigned int* min_milliwatts, unsigned int* max_milliwatts),                \
     (device, min_milliwatts, max_milliwatts), nvmlDeviceGetPowerManagementLimitConstraints)           \
  X1(DeviceSetPowerManagementLimit, Optional, (nvmlDevice_t device, unsigned int milliwatts),          \
     (device, milliwatts), nvmlDeviceSetPowerManagementLimit)                                          \
  /* Locked SM clocks (Volta+, root): a clock sweep's knob */                                          \
  X1(DeviceSetGpuLockedClocks, Optional, (nvmlDevice_t device, unsigned int min_mhz,                   \
     unsigned int max_mhz), (device, min_mhz, max_mhz), nvmlDeviceSetGpuLockedClocks)                  \
  X1(DeviceResetGpuLockedClocks, Optional, (nvmlDevice_t device), (device),                            \
     nvmlDeviceResetGpuLockedClocks)                                                                   \
  /* Thermals, clocks, activity */                                                                     \
  X1(DeviceGetTemperature, Optional, (nvmlDevice_t device, unsigned int sensor, unsigned int* celsius), \
     (device, sensor, celsius), nvmlDeviceGetTemperature)                                              \
  X1(DeviceGetClockInfo, Optional, (nvmlDevice_t device, unsigned int type, unsigned int* mhz),        \
     (device, type, mhz), nvmlDeviceGetClockInfo)                                                      \
  X1(DeviceGetMaxClockInfo, Optional, (nvmlDevice_t device, unsigned int type, unsigned int* mhz),     \
     (device, type, mhz), nvmlDeviceGetMaxClockInfo)                                                   \
  X1(DeviceGetUtilizationRates, Optional, (nvmlDevice_t device, nvmlUtilization_t* utilization),       \
     (device, utilization), nvmlDeviceGetUtilizationRates)                                             \
  X2(DeviceGetCurrentClocksEventReasons, Optional, (nvmlDevice_t device, unsigned long long* reasons), \
     (device, reasons), nvmlDeviceGetCurrentClocksEventReasons,                                        \
     nvmlDeviceGetCurrentClocksThrottleReasons)                                                        \
  X1(DeviceGetFieldValues, Optional, (nvmlDevice_t device, int count, nvmlFieldValue_t* values),       \
     (device, count, values), nvmlDeviceGetFieldValues)                                                \
  X2(DeviceGetComputeRunningProcesses, Optional,                                                       \
     (nvmlDevice_t device, unsigned int* count, nvmlProcessInfo_t* infos), (device, count, infos),     \
     nvmlDeviceGetComputeRunningProcesses_v3, nvmlDeviceGetComputeRunningProcesses_v2)                 \
  X1(DeviceGetProcessUtilization, Optional, (nvmlDevice_t device,                                      \
     nvmlProcessUtilizationSample_t* samples, unsigned int* count, unsigned long long since_us),        \
     (device, samples, count, since_us), nvmlDeviceGetProcessUtilization)                              \
  /* GPM (Hopper and newer) */                                                                         \
  X1(GpmQueryDeviceSupport, Optional, (nvmlDevice_t device, nvmlGpmSupport_t* support),                \
     (device, support), nvmlGpmQueryDeviceSupport)                                                     \
  X1(GpmSampleAlloc, Optional, (nvmlGpmSample_t* sample), (sample), nvmlGpmSampleAlloc)                \
  X1(GpmSampleFree, Optional, (nvmlGpmSample_t sample), (sample), nvmlGpmSampleFree)                   \
  X1(GpmSampleGet, Optional, (nvmlDevice_t device, nvmlGpmSample_t sample), (device, sample),          \
     nvmlGpmSampleGet)                                                                                 \
  X1(GpmMetricsGet, Optional, (nvmlGpmMetricsGet_t* metrics), (metrics), nvmlGpmMetricsGet)         \
  X1(GpmMigSampleGet, Optional, (nvmlDevice_t device, unsigned int gpu_instance_id,                  \
     nvmlGpmSample_t sample), (device, gpu_instance_id, sample), nvmlGpmMigSampleGet)                \
  /* Health: events (Xids, ECC) and the error counters */                                  \
  X1(EventSetCreate, Optional, (nvmlEventSet_t* set), (set), nvmlEventSetCreate)                      \
  X1(DeviceRegisterEvents, Optional, (nvmlDevice_t device, unsigned long long event_types,            \
     nvmlEventSet_t set), (device, event_types, set), nvmlDeviceRegisterEvents)                       \
  X1(DeviceGetSupportedEventTypes, Optional, (nvmlDevice_t device, unsigned long long* event_types),  \
     (device, event_types), nvmlDeviceGetSupportedEventTypes)                                         \
  X2(EventSetWait, Optional, (nvmlEventSet_t set, nvmlEventData_t* data, unsigned int timeout_ms),    \
     (set, data, timeout_ms), nvmlEventSetWait_v2, nvmlEventSetWait)                                  \
  X1(EventSetFree, Optional, (nvmlEventSet_t set), (set), nvmlEventSetFree)                           \
  X1(DeviceGetEccMode, Optional, (nvmlDevice_t device, unsigned int* current, unsigned int* pending), \
     (device, current, pending), nvmlDeviceGetEccMode)                                                \
  X1(DeviceGetTotalEccErrors, Optional, (nvmlDevice_t device, unsigned int error_type,                \
     unsigned int counter_type, unsigned long long* count), (device, error_type, counter_type, count), \
     nvmlDeviceGetTotalEccErrors)                                                                     \
  X1(DeviceGetRemappedRows, Optional, (nvmlDevice_t device, unsigned int* corrected,                  \
     unsigned int* uncorrected, unsigned int* pending, unsigned int* failure),                        \
     (device, corrected, uncorrected, pending, failure), nvmlDeviceGetRemappedRows)                   \
  X1(DeviceGetRetiredPages, Optional, (nvmlDevice_t device, unsigned int cause,                       \
     unsigned int* count, unsigned long long* addresses), (device, cause, count, addresses),          \
     nvmlDeviceGetRetiredPages)                                                                       \
  X1(DeviceGetPcieReplayCounter, Optional, (nvmlDevice_t device, unsigned int* value),                \
     (device, value), nvmlDeviceGetPcieReplayCounter)                                                 \
  X1(DeviceGetEncoderUtilization, Optional, (nvmlDevice_t device, unsigned int* percent,              \
     unsigned int* sampling_period_us), (device, percent, sampling_period_us),                        \
     nvmlDeviceGetEncoderUtilization)                                                                 \
  X1(DeviceGetDecoderUtilization, Optional, (nvmlDevice_t device, unsigned int* percent,              \
     unsigned int* sampling_period_us), (device, percent, sampling_period_us),                        \
     nvmlDeviceGetDecoderUtilization)
// clang-format on

// nvmlErrorString is the one entry that does not return nvmlReturn_t; it is declared on its own.
#define GPUSCOPE_NVML_ERROR_STRING_SYMBOL nvmlErrorString
