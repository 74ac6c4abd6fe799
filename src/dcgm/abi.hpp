// The DCGM C API as gpuscope uses it (facts in docs/dcgm-abi.md, use in docs/sources.md):
// handles, the status codes and constants used, and the layouts of the structs passed across
// the library boundary, as DCGM 3.3 and 4.x (libdcgm.so.3 / .so.4) define them; the two agree on
// every struct here (the MIG hierarchy's are checked against DCGM 4.5.3's headers). DCGM is loaded
// at run time like NVML, never linked, so these declarations are gpuscope's own, checked by
// static_asserts against the sizes the public headers give.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

using dcgmReturn_t = int;
using dcgmHandle_t = std::uintptr_t;
using dcgmGpuGrp_t = std::uintptr_t;
using dcgmFieldGrp_t = std::uintptr_t;
using dcgm_field_eid_t = unsigned int;

// The value of a field: which member is valid is said by fieldType (DCGM_FT_*).
union dcgmFieldValueUnion {
  std::int64_t i64;
  double dbl;
  char str[256];    // DCGM_MAX_STR_LENGTH
  char blob[4096];  // DCGM_MAX_BLOB_LENGTH
};

// One field's latest value for one entity (dcgmGetLatestValues_v2, dcgmEntitiesGetLatestValues).
struct dcgmFieldValue_v2 {
  unsigned int version;
  unsigned int entityGroupId;  // dcgm_field_entity_group_t
  dcgm_field_eid_t entityId;
  unsigned short fieldId;
  unsigned short fieldType;  // a DCGM_FT_* character
  int status;                // DCGM_ST_*
  unsigned int unused;
  std::int64_t ts;  // µs since 1970
  dcgmFieldValueUnion value;
};

// dcgmConnect_v2's parameters (version 2).
struct dcgmConnectV2Params_v2 {
  unsigned int version;
  unsigned int persistAfterDisconnect;
  unsigned int timeoutMs;
  unsigned int addressIsUnixSocket;
};

// dcgmStartEmbedded_v2's parameters (version 2: accepted by DCGM 3 and 4; version 3 is 4.3+).
struct dcgmStartEmbeddedV2Params_v2 {
  unsigned int version;
  unsigned int opMode;      // dcgmOperationMode_t
  dcgmHandle_t dcgmHandle;  // out
  const char* logFile;      // nullptr: no log
  int severity;             // DcgmLoggingSeverity_t; -1 unspecified
  unsigned int denyListCount;
  const char* serviceAccount;  // nullptr
  unsigned int denyList[10];   // module ids not to load
};

struct dcgmGroupEntityPair_t {
  unsigned int entityGroupId;  // dcgm_field_entity_group_t
  dcgm_field_eid_t entityId;
};

// Where a MIG entity sits: its GPU's UUID and NVML index, its NVML GPU (and compute) instance
// ids, NVML's profile ID and its slices (dcgm_structs.h, dcgmMigEntityInfo_t).
struct dcgmMigEntityInfo_t {
  char gpuUuid[128];                   // the parent GPU's UUID
  unsigned int nvmlGpuIndex;           // the parent GPU's NVML index
  unsigned int nvmlInstanceId;         // NVML's GPU instance id (not DCGM's entity id)
  unsigned int nvmlComputeInstanceId;  // NVML's compute instance id; ~0U on a GPU instance row
  unsigned int nvmlMigProfileId;       // NVML's profile ID (19 for 1g.10gb), not its index
  unsigned int nvmlProfileSlices;
};

// One row of the MIG hierarchy: an instance entity and its parent (a GPU instance's is its GPU).
struct dcgmMigHierarchyInfo_v2 {
  dcgmGroupEntityPair_t entity;
  dcgmGroupEntityPair_t parent;
  dcgmMigEntityInfo_t info;
};

// dcgmGetGpuInstanceHierarchy's answer (version 2): up to DCGM_MAX_HIERARCHY_INFO rows
// (DCGM_MAX_NUM_DEVICES x DCGM_MAX_TOTAL_INSTANCES_PER_GPU).
struct dcgmMigHierarchy_v2 {
  unsigned int version;
  unsigned int count;
  dcgmMigHierarchyInfo_v2 entityList[32 * 14];
};

// One profiling metric group of a GPU: groups that share majorId cannot be watched together.
struct dcgmProfMetricGroupInfo_v2 {
  unsigned short majorId;
  unsigned short minorId;
  unsigned int numFieldIds;
  unsigned short fieldIds[64];
};

// dcgmProfGetSupportedMetricGroups's parameters (version 3).
struct dcgmProfGetMetricGroups_v3 {
  unsigned int version;
  unsigned int unused;
  unsigned int gpuId;
  unsigned int numMetricGroups;  // out
  dcgmProfMetricGroupInfo_v2 metricGroups[10];
};

}  // extern "C"

namespace gpuscope::dcgm {

// MAKE_DCGM_VERSION: the struct's size in the low 24 bits, its version above.
constexpr unsigned int make_version(std::size_t size, unsigned int version) {
  return static_cast<unsigned int>(size) | (version << 24);
}

inline constexpr unsigned int kFieldValueV2Version = make_version(sizeof(dcgmFieldValue_v2), 2);
inline constexpr unsigned int kConnectV2ParamsVersion =
    make_version(sizeof(dcgmConnectV2Params_v2), 2);
inline constexpr unsigned int kStartEmbeddedV2ParamsVersion2 =
    make_version(sizeof(dcgmStartEmbeddedV2Params_v2), 2);
inline constexpr unsigned int kProfGetMetricGroupsVersion3 =
    make_version(sizeof(dcgmProfGetMetricGroups_v3), 3);
inline constexpr unsigned int kMigHierarchyVersion2 = make_version(sizeof(dcgmMigHierarchy_v2), 2);
inline constexpr unsigned int kMaxHierarchyInfo = 32 * 14;  // DCGM_MAX_HIERARCHY_INFO

// The sizes and version words of DCGM 3.3.9 and 4.6.0's headers (docs/dcgm-abi.md).
static_assert(sizeof(dcgmFieldValueUnion) == 4096);
static_assert(sizeof(dcgmFieldValue_v2) == 4128 && offsetof(dcgmFieldValue_v2, ts) == 24 &&
              offsetof(dcgmFieldValue_v2, value) == 32);
static_assert(kFieldValueV2Version == 0x02001020);
static_assert(sizeof(dcgmConnectV2Params_v2) == 16 && kConnectV2ParamsVersion == 0x02000010);
static_assert(sizeof(dcgmStartEmbeddedV2Params_v2) == 80 &&
              offsetof(dcgmStartEmbeddedV2Params_v2, dcgmHandle) == 8 &&
              offsetof(dcgmStartEmbeddedV2Params_v2, denyList) == 40 &&
              kStartEmbeddedV2ParamsVersion2 == 0x02000050);
static_assert(sizeof(dcgmGroupEntityPair_t) == 8);
static_assert(sizeof(dcgmProfMetricGroupInfo_v2) == 136);
// DCGM 4.5.3's dcgm_structs.h: dcgmMigEntityInfo_t, dcgmMigHierarchyInfo_v2, dcgmMigHierarchy_v2.
static_assert(sizeof(dcgmMigEntityInfo_t) == 148 &&
              offsetof(dcgmMigEntityInfo_t, nvmlInstanceId) == 132 &&
              offsetof(dcgmMigEntityInfo_t, nvmlProfileSlices) == 144);
static_assert(sizeof(dcgmMigHierarchyInfo_v2) == 164 &&
              offsetof(dcgmMigHierarchyInfo_v2, info) == 16);
static_assert(sizeof(dcgmMigHierarchy_v2) == 73480 &&
              offsetof(dcgmMigHierarchy_v2, entityList) == 8 &&
              kMigHierarchyVersion2 == 0x02011F08);
static_assert(sizeof(dcgmProfGetMetricGroups_v3) == 1376 &&
              kProfGetMetricGroupsVersion3 == 0x03000560);

// Status codes gpuscope tells apart (DCGM_ST_*).
inline constexpr dcgmReturn_t kOk = 0;
inline constexpr dcgmReturn_t kNotSupported = -6;
inline constexpr dcgmReturn_t kNoData = -14;
inline constexpr dcgmReturn_t kNotWatched = -16;
inline constexpr dcgmReturn_t kNoPermission = -17;
inline constexpr dcgmReturn_t kGpuIsLost = -18;
inline constexpr dcgmReturn_t kConnectionNotValid = -21;
inline constexpr dcgmReturn_t kRequiresRoot = -29;
inline constexpr dcgmReturn_t kModuleNotLoaded = -33;
inline constexpr dcgmReturn_t kInUse = -34;
inline constexpr dcgmReturn_t kProfilingNotSupported = -36;
inline constexpr dcgmReturn_t kProfilingLibraryError = -37;
inline constexpr dcgmReturn_t kProfilingMultiPass = -38;

// Groups, modes, entities, field types.
inline constexpr unsigned int kGroupDefault = 0;  // dcgmGroupType_t: all GPUs
inline constexpr unsigned int kGroupEmpty = 1;
inline constexpr unsigned int kOperationModeAuto = 1;
inline constexpr unsigned int kOperationModeManual = 2;
inline constexpr unsigned int kEntityGpu = 1;    // DCGM_FE_GPU
inline constexpr unsigned int kEntityGpuI = 4;   // DCGM_FE_GPU_I: a GPU instance (MIG)
inline constexpr unsigned int kEntityGpuCi = 5;  // DCGM_FE_GPU_CI: a compute instance
inline constexpr unsigned short kTypeDouble = 'd';
inline constexpr unsigned short kTypeInt64 = 'i';
inline constexpr int kMaxNumDevices = 32;
inline constexpr const char* kDefaultHostEnginePort = "5555";
inline constexpr const char* kDefaultSocketPath = "/tmp/nv-hostengine";

// Blank values: a value at or above the base means "no value" (blank, not found, not supported,
// not permitted).
inline constexpr std::int64_t kInt64Blank = 0x7ffffffffffffff0;
inline constexpr double kFp64Blank = 140737488355328.0;  // 2^47
constexpr bool is_blank(std::int64_t v) {
  return v >= kInt64Blank;
}
constexpr bool is_blank(double v) {
  return v >= kFp64Blank;
}

// The profiling fields gpuscope maps onto its catalog (ratios 0–1, except PCIe/NVLink: bytes/s).
inline constexpr unsigned short kProfGrEngineActive = 1001;
inline constexpr unsigned short kProfSmActive = 1002;
inline constexpr unsigned short kProfSmOccupancy = 1003;
inline constexpr unsigned short kProfTensorActive = 1004;
inline constexpr unsigned short kProfDramActive = 1005;
inline constexpr unsigned short kProfFp64Active = 1006;
inline constexpr unsigned short kProfFp32Active = 1007;
inline constexpr unsigned short kProfFp16Active = 1008;
inline constexpr unsigned short kProfPcieTxBytes = 1009;
inline constexpr unsigned short kProfPcieRxBytes = 1010;
inline constexpr unsigned short kProfNvlinkTxBytes = 1011;
inline constexpr unsigned short kProfNvlinkRxBytes = 1012;
// A GPU's identity: its UUID (DCGM_FI_DEV_UUID) and PCI bus id (DCGM_FI_DEV_PCI_BUSID), strings
// read live, without a watch.
inline constexpr unsigned short kDevUuid = 54;
inline constexpr unsigned short kDevPciBusId = 57;
// Device fields gssr also reads: GPU utilization (%, int64) and frame buffer (MiB, int64).
inline constexpr unsigned short kDevGpuUtil = 203;
inline constexpr unsigned short kDevFbTotal = 250;
inline constexpr unsigned short kDevFbFree = 251;
inline constexpr unsigned short kDevFbUsed = 252;
inline constexpr unsigned short kDevFbReserved = 253;

}  // namespace gpuscope::dcgm
