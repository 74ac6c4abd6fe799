// The NVML application binary interface as gpuscope uses it: types, constants and struct layouts.
//
// No NVML header ships with Debian, so these declarations are written from the public nvml.h
// documentation (cross-checked against the machine-generated bindings in Debian's
// librust-nvml-wrapper-sys-dev 0.7.0). Only this folder and sim/ include this file.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

using nvmlReturn_t = int;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
struct nvmlGpmSample_st;
using nvmlGpmSample_t = nvmlGpmSample_st*;
struct nvmlEventSet_st;

// nvmlEventSet_t: a struct holding one pointer, passed by value to Register, Wait and Free.
struct nvmlEventSet_t {
  nvmlEventSet_st* handle;
};

// nvmlEventData_t as filled by nvmlEventSetWait_v2 (and the older nvmlEventSetWait, same layout).
struct nvmlEventData_t {
  nvmlDevice_t device;
  unsigned long long eventType;  // one nvmlEventType* bit
  unsigned long long eventData;  // the Xid for XidCriticalError (999: unknown Xid), else 0
  unsigned int gpuInstanceId;    // 0xFFFFFFFF unless MIG is on and the Xid is attributable
  unsigned int computeInstanceId;
};

// nvmlPciInfo_t as filled by nvmlDeviceGetPciInfo_v3.
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;  // (device id << 16) | vendor id
  unsigned int pciSubSystemId;
  char busId[32];
};

struct nvmlMemory_t {
  unsigned long long total;  // bytes
  unsigned long long free;
  unsigned long long used;
};

// nvmlMemory_v2_t (nvmlDeviceGetMemoryInfo_v2): also reports memory the driver reserves.
struct nvmlMemory_v2_t {
  unsigned int version;  // gpuscope::nvml::kMemoryV2Version
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};

struct nvmlUtilization_t {
  unsigned int gpu;     // percent of time a kernel was running over the last sample period
  unsigned int memory;  // percent of time device memory was read or written
};

// Layout used by nvmlDeviceGetComputeRunningProcesses_v3 and _v2.
struct nvmlProcessInfo_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

// nvmlDeviceAttributes_t as filled by nvmlDeviceGetAttributes_v2, which answers only for a MIG
// device's handle: the resources of the GPU instance (and compute instance) it stands for.
struct nvmlDeviceAttributes_t {
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
  unsigned int gpuInstanceSliceCount;
  unsigned int computeInstanceSliceCount;
  unsigned long long memorySizeMB;
};

// Layout used by nvmlDeviceGetProcessUtilization: one process's utilization over the driver's
// last sample period, percent.
struct nvmlProcessUtilizationSample_t {
  unsigned int pid;
  unsigned long long timeStamp;  // CPU timestamp in microseconds
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
};

union nvmlValue_t {
  double dVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  long long sllVal;
  int siVal;
  unsigned short usVal;
};

struct nvmlFieldValue_t {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;    // microseconds since the epoch, when the value was read
  long long latencyUsec;  // how long reading it took
  int valueType;          // NVML_VALUE_TYPE_*
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
};

struct nvmlGpmSupport_t {
  unsigned int version;  // NVML_GPM_SUPPORT_VERSION
  unsigned int isSupportedDevice;
};

struct nvmlGpmMetric_t {
  unsigned int metricId;
  nvmlReturn_t nvmlReturn;
  double value;
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;
};

// Older headers size metrics[] at 98, newer ones at 333 with the same version 1; the larger array
// is always safe because the driver only touches the first numMetrics entries.
inline constexpr unsigned int NVML_GPM_METRIC_MAX = 333;

struct nvmlGpmMetricsGet_t {
  unsigned int version;  // NVML_GPM_METRICS_GET_VERSION
  unsigned int numMetrics;
  nvmlGpmSample_t sample1;
  nvmlGpmSample_t sample2;
  nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
};

}  // extern "C"

namespace gpuscope::nvml {

// Return codes (nvmlReturn_t).
inline constexpr nvmlReturn_t kSuccess = 0;
inline constexpr nvmlReturn_t kErrorUninitialized = 1;
inline constexpr nvmlReturn_t kErrorInvalidArgument = 2;
inline constexpr nvmlReturn_t kErrorNotSupported = 3;
inline constexpr nvmlReturn_t kErrorNoPermission = 4;
inline constexpr nvmlReturn_t kErrorAlreadyInitialized = 5;
inline constexpr nvmlReturn_t kErrorNotFound = 6;
inline constexpr nvmlReturn_t kErrorInsufficientSize = 7;
inline constexpr nvmlReturn_t kErrorDriverNotLoaded = 9;
inline constexpr nvmlReturn_t kErrorTimeout = 10;
inline constexpr nvmlReturn_t kErrorLibraryNotFound = 12;
inline constexpr nvmlReturn_t kErrorFunctionNotFound = 13;
inline constexpr nvmlReturn_t kErrorGpuIsLost = 15;
inline constexpr nvmlReturn_t kErrorNoData = 21;
inline constexpr nvmlReturn_t kErrorArgumentVersionMismatch = 25;
inline constexpr nvmlReturn_t kErrorUnknown = 999;

// NVML_STRUCT_VERSION(Memory, 2): the struct size in the low bits, the version in the top byte.
inline constexpr unsigned int kMemoryV2Version =
    static_cast<unsigned int>(sizeof(nvmlMemory_v2_t)) | (2U << 24U);

// Buffer sizes (the _V2 sizes are the larger, always-safe ones).
inline constexpr unsigned int kDeviceNameBufferSize = 96;
inline constexpr unsigned int kDeviceUuidBufferSize = 96;
inline constexpr unsigned int kSystemVersionBufferSize = 80;

// nvmlDeviceArchitecture_t.
inline constexpr unsigned int kArchKepler = 2;
inline constexpr unsigned int kArchMaxwell = 3;
inline constexpr unsigned int kArchPascal = 4;
inline constexpr unsigned int kArchVolta = 5;
inline constexpr unsigned int kArchTuring = 6;
inline constexpr unsigned int kArchAmpere = 7;
inline constexpr unsigned int kArchAda = 8;
inline constexpr unsigned int kArchHopper = 9;
inline constexpr unsigned int kArchBlackwell = 10;

// nvmlTemperatureSensors_t.
inline constexpr unsigned int kTemperatureGpu = 0;

// nvmlClockType_t.
inline constexpr unsigned int kClockGraphics = 0;
inline constexpr unsigned int kClockSm = 1;
inline constexpr unsigned int kClockMem = 2;
inline constexpr unsigned int kClockVideo = 3;

// Clock event (throttle) reason bits, nvmlClocksEventReason*.
inline constexpr unsigned long long kClocksEventGpuIdle = 0x1;
inline constexpr unsigned long long kClocksEventApplicationsClocksSetting = 0x2;
inline constexpr unsigned long long kClocksEventSwPowerCap = 0x4;
inline constexpr unsigned long long kClocksEventHwSlowdown = 0x8;
inline constexpr unsigned long long kClocksEventSyncBoost = 0x10;
inline constexpr unsigned long long kClocksEventSwThermalSlowdown = 0x20;
inline constexpr unsigned long long kClocksEventHwThermalSlowdown = 0x40;
inline constexpr unsigned long long kClocksEventHwPowerBrakeSlowdown = 0x80;
inline constexpr unsigned long long kClocksEventDisplayClockSetting = 0x100;

// nvmlValueType_t.
inline constexpr int kValueTypeDouble = 0;
inline constexpr int kValueTypeUnsignedInt = 1;
inline constexpr int kValueTypeUnsignedLong = 2;
inline constexpr int kValueTypeUnsignedLongLong = 3;
inline constexpr int kValueTypeSignedLongLong = 4;
inline constexpr int kValueTypeSignedInt = 5;
inline constexpr int kValueTypeUnsignedShort = 6;

// Event type bits, nvmlEventType* (bits 0x20 and 0x40 are unassigned).
inline constexpr unsigned long long kEventTypeNone = 0x0;
inline constexpr unsigned long long kEventTypeSingleBitEccError = 0x1;
inline constexpr unsigned long long kEventTypeDoubleBitEccError = 0x2;
inline constexpr unsigned long long kEventTypePState = 0x4;
inline constexpr unsigned long long kEventTypeXidCriticalError = 0x8;
inline constexpr unsigned long long kEventTypeClock = 0x10;
inline constexpr unsigned long long kEventTypePowerSourceChange = 0x80;
inline constexpr unsigned long long kEventMigConfigChange = 0x100;
inline constexpr unsigned long long kEventTypeSingleBitEccErrorStorm = 0x200;
inline constexpr unsigned long long kEventTypeDramRetirementEvent = 0x400;
inline constexpr unsigned long long kEventTypeDramRetirementFailure = 0x800;
inline constexpr unsigned long long kEventTypeNonFatalPoisonError = 0x1000;
inline constexpr unsigned long long kEventTypeFatalPoisonError = 0x2000;
inline constexpr unsigned long long kEventTypeGpuUnavailableError = 0x4000;
inline constexpr unsigned long long kEventTypeGpuRecoveryAction = 0x8000;
inline constexpr unsigned long long kEventTypeAll = 0xFF9F;
// nvmlEventData_t::eventData for an Xid the driver cannot name; the instance ids without MIG.
inline constexpr unsigned long long kEventDataUnknownXid = 999;
inline constexpr unsigned int kEventNoInstanceId = 0xFFFFFFFF;

// nvmlDeviceGetMigMode's modes (NVML_DEVICE_MIG_DISABLE / _ENABLE).
inline constexpr unsigned int kDeviceMigDisable = 0;
inline constexpr unsigned int kDeviceMigEnable = 1;
// nvmlProcessInfo_t's instance ids for a process not in a MIG instance (MIG off).
inline constexpr unsigned int kNoInstanceId = 0xFFFFFFFF;

// nvmlEnableState_t.
inline constexpr unsigned int kFeatureDisabled = 0;
inline constexpr unsigned int kFeatureEnabled = 1;

// nvmlMemoryErrorType_t.
inline constexpr unsigned int kMemoryErrorCorrected = 0;
inline constexpr unsigned int kMemoryErrorUncorrected = 1;

// nvmlEccCounterType_t.
inline constexpr unsigned int kVolatileEcc = 0;   // reset at driver load
inline constexpr unsigned int kAggregateEcc = 1;  // lifetime

// nvmlPageRetirementCause_t.
inline constexpr unsigned int kPageRetirementMultipleSingleBitEcc = 0;
inline constexpr unsigned int kPageRetirementDoubleBitEcc = 1;

// Field ids for nvmlDeviceGetFieldValues (NVML_FI_DEV_*).
// Violation (clock event) times: PERF_POLICY_* (74-81) and the ns counters 269-271.
inline constexpr unsigned int kFieldPerfPolicyPower = 74;
inline constexpr unsigned int kFieldPerfPolicyThermal = 75;
inline constexpr unsigned int kFieldPerfPolicySyncBoost = 76;
inline constexpr unsigned int kFieldPerfPolicyBoardLimit = 77;
inline constexpr unsigned int kFieldPerfPolicyLowUtilization = 78;
inline constexpr unsigned int kFieldPerfPolicyReliability = 79;
inline constexpr unsigned int kFieldPerfPolicyTotalAppClocks = 80;
inline constexpr unsigned int kFieldPerfPolicyTotalBaseClocks = 81;
inline constexpr unsigned int kFieldClocksEventSwThermSlowdown = 269;       // ns
inline constexpr unsigned int kFieldClocksEventHwThermSlowdown = 270;       // ns
inline constexpr unsigned int kFieldClocksEventHwPowerBrakeSlowdown = 271;  // ns
// Health counters read at the slow health cadence (collect/health_reader).
inline constexpr unsigned int kFieldRetiredSbe = 29;                // pages
inline constexpr unsigned int kFieldRetiredDbe = 30;                // pages
inline constexpr unsigned int kFieldRetiredPending = 31;            // 1: a retirement is pending
inline constexpr unsigned int kFieldNvlinkCrcFlitErrorTotal = 38;   // all links
inline constexpr unsigned int kFieldNvlinkCrcDataErrorTotal = 45;   // all links
inline constexpr unsigned int kFieldNvlinkReplayErrorTotal = 52;    // all links
inline constexpr unsigned int kFieldNvlinkRecoveryErrorTotal = 59;  // all links
inline constexpr unsigned int kFieldNvlinkThroughputDataTx = 138;   // KiB, cumulative
inline constexpr unsigned int kFieldNvlinkThroughputDataRx = 139;   // KiB, cumulative
// nvmlFieldValue_t::scopeId for the per-link fields: the sum over all links.
inline constexpr unsigned int kScopeAllLinks = 0xFFFFFFFFu;
inline constexpr unsigned int kFieldMemoryTemp = 82;
inline constexpr unsigned int kFieldTotalEnergyConsumption = 83;  // mJ
inline constexpr unsigned int kFieldPowerAverage = 185;           // mW, 1 s average
inline constexpr unsigned int kFieldPowerInstant = 186;           // mW
inline constexpr unsigned int kFieldPowerMinLimit = 187;
inline constexpr unsigned int kFieldPowerMaxLimit = 188;
inline constexpr unsigned int kFieldPowerDefaultLimit = 189;
inline constexpr unsigned int kFieldPowerCurrentLimit = 190;
inline constexpr unsigned int kFieldEnergy = 191;
inline constexpr unsigned int kFieldPowerRequestedLimit = 192;
inline constexpr unsigned int kFieldPcieCountTxBytes = 197;
inline constexpr unsigned int kFieldPcieCountRxBytes = 198;

// Power scopes (nvmlFieldValue_t::scopeId for the power fields).
inline constexpr unsigned int kPowerScopeGpu = 0;
inline constexpr unsigned int kPowerScopeModule = 1;
inline constexpr unsigned int kPowerScopeMemory = 2;

// GPM.
inline constexpr unsigned int kGpmSupportVersion = 1;
inline constexpr unsigned int kGpmMetricsGetVersion = 1;
inline constexpr double kGpmMinIntervalSeconds = 0.1;  // the GPM counters' internal refresh period

// nvmlGpmMetricId_t (utilizations in percent, throughputs in MiB/s).
inline constexpr unsigned int kGpmGraphicsUtil = 1;
inline constexpr unsigned int kGpmSmUtil = 2;
inline constexpr unsigned int kGpmSmOccupancy = 3;
inline constexpr unsigned int kGpmIntegerUtil = 4;
inline constexpr unsigned int kGpmAnyTensorUtil = 5;
inline constexpr unsigned int kGpmDfmaTensorUtil = 6;
inline constexpr unsigned int kGpmHmmaTensorUtil = 7;
inline constexpr unsigned int kGpmDmmaTensorUtil = 8;
inline constexpr unsigned int kGpmImmaTensorUtil = 9;
inline constexpr unsigned int kGpmDramBwUtil = 10;
inline constexpr unsigned int kGpmFp64Util = 11;
inline constexpr unsigned int kGpmFp32Util = 12;
inline constexpr unsigned int kGpmFp16Util = 13;
inline constexpr unsigned int kGpmPcieTxPerSec = 20;
inline constexpr unsigned int kGpmPcieRxPerSec = 21;
inline constexpr unsigned int kGpmNvlinkTotalRxPerSec = 60;
inline constexpr unsigned int kGpmNvlinkTotalTxPerSec = 61;

}  // namespace gpuscope::nvml

// Layouts the driver writes into: a mismatch here corrupts memory, so pin them.
static_assert(sizeof(nvmlPciInfo_t) == 68);
static_assert(sizeof(nvmlMemory_t) == 24);
static_assert(sizeof(nvmlMemory_v2_t) == 40);
static_assert(sizeof(nvmlProcessInfo_t) == 24);
static_assert(offsetof(nvmlProcessInfo_t, usedGpuMemory) == 8);
static_assert(offsetof(nvmlProcessInfo_t, gpuInstanceId) == 16);
static_assert(offsetof(nvmlProcessInfo_t, computeInstanceId) == 20);
static_assert(sizeof(nvmlDeviceAttributes_t) == 40 && alignof(nvmlDeviceAttributes_t) == 8);
static_assert(offsetof(nvmlDeviceAttributes_t, gpuInstanceSliceCount) == 24);
static_assert(offsetof(nvmlDeviceAttributes_t, computeInstanceSliceCount) == 28);
static_assert(offsetof(nvmlDeviceAttributes_t, memorySizeMB) == 32);
static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32);
static_assert(offsetof(nvmlProcessUtilizationSample_t, smUtil) == 16);
static_assert(sizeof(nvmlValue_t) == 8);
static_assert(sizeof(nvmlFieldValue_t) == 40);
static_assert(sizeof(nvmlGpmMetric_t) == 40);
static_assert(offsetof(nvmlGpmMetricsGet_t, metrics) == 24);
static_assert(sizeof(nvmlEventSet_t) == 8);
static_assert(sizeof(nvmlEventData_t) == 32 && alignof(nvmlEventData_t) == 8);
static_assert(offsetof(nvmlEventData_t, eventType) == 8);
static_assert(offsetof(nvmlEventData_t, eventData) == 16);
static_assert(offsetof(nvmlEventData_t, gpuInstanceId) == 24);
static_assert(offsetof(nvmlEventData_t, computeInstanceId) == 28);
