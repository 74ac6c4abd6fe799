// The one list of DCGM entry points gpuscope uses, in the form of
// nvml/entry_points.hpp, so that the loader's function table and the simulated libdcgm's exports
// are expanded from the same list and cannot disagree.
//
//   GPUSCOPE_DCGM_ENTRY_POINTS(X)
//     X(id, requirement, params, args, symbol)
//
// requirement is Required (the library is refused without it) or Optional. Every function
// returns dcgmReturn_t; the error text is the separate export `errorString` (DCGM has no
// `dcgmErrorString`, docs/dcgm-abi.md).
#pragma once

#include "dcgm/abi.hpp"

// clang-format off
#define GPUSCOPE_DCGM_ENTRY_POINTS(X)                                                                 \
  /* Library, and the two ways to a handle: a running nv-hostengine, or DCGM embedded */              \
  X(Init, Required, (), (), dcgmInit)                                                                 \
  X(Shutdown, Required, (), (), dcgmShutdown)                                                         \
  X(Connect, Optional, (const char* address, dcgmConnectV2Params_v2* params, dcgmHandle_t* handle),   \
    (address, params, handle), dcgmConnect_v2)                                                        \
  X(Disconnect, Optional, (dcgmHandle_t handle), (handle), dcgmDisconnect)                             \
  X(StartEmbedded, Optional, (dcgmStartEmbeddedV2Params_v2* params), (params), dcgmStartEmbedded_v2)  \
  X(StopEmbedded, Optional, (dcgmHandle_t handle), (handle), dcgmStopEmbedded)                         \
  /* GPUs, groups and field groups */                                                                 \
  X(GetAllSupportedDevices, Required, (dcgmHandle_t handle, unsigned int* gpu_ids, int* count),       \
    (handle, gpu_ids, count), dcgmGetAllSupportedDevices)                                             \
  X(GroupCreate, Required,                                                                            \
    (dcgmHandle_t handle, unsigned int type, const char* name, dcgmGpuGrp_t* group),                  \
    (handle, type, name, group), dcgmGroupCreate)                                                     \
  X(GroupAddDevice, Required, (dcgmHandle_t handle, dcgmGpuGrp_t group, unsigned int gpu_id),         \
    (handle, group, gpu_id), dcgmGroupAddDevice)                                                      \
  X(GroupAddEntity, Optional,                                                                         \
    (dcgmHandle_t handle, dcgmGpuGrp_t group, unsigned int entity_group,                              \
     dcgm_field_eid_t entity_id),                                                                     \
    (handle, group, entity_group, entity_id), dcgmGroupAddEntity)                                     \
  /* MIG: the GPU and compute instances, with DCGM's entity ids for them */                           \
  X(GetGpuInstanceHierarchy, Optional, (dcgmHandle_t handle, dcgmMigHierarchy_v2* hierarchy),         \
    (handle, hierarchy), dcgmGetGpuInstanceHierarchy)                                                 \
  X(GroupDestroy, Required, (dcgmHandle_t handle, dcgmGpuGrp_t group), (handle, group),               \
    dcgmGroupDestroy)                                                                                 \
  X(FieldGroupCreate, Required,                                                                       \
    (dcgmHandle_t handle, int count, const unsigned short* field_ids, const char* name,               \
     dcgmFieldGrp_t* field_group),                                                                    \
    (handle, count, field_ids, name, field_group), dcgmFieldGroupCreate)                              \
  X(FieldGroupDestroy, Required, (dcgmHandle_t handle, dcgmFieldGrp_t field_group),                   \
    (handle, field_group), dcgmFieldGroupDestroy)                                                     \
  /* Watching and reading */                                                                          \
  X(WatchFields, Required,                                                                            \
    (dcgmHandle_t handle, dcgmGpuGrp_t group, dcgmFieldGrp_t field_group, long long update_us,        \
     double max_keep_age_s, int max_keep_samples),                                                    \
    (handle, group, field_group, update_us, max_keep_age_s, max_keep_samples), dcgmWatchFields)       \
  X(UnwatchFields, Required, (dcgmHandle_t handle, dcgmGpuGrp_t group, dcgmFieldGrp_t field_group),   \
    (handle, group, field_group), dcgmUnwatchFields)                                                  \
  X(UpdateAllFields, Required, (dcgmHandle_t handle, int wait), (handle, wait), dcgmUpdateAllFields)  \
  X(EntitiesGetLatestValues, Required,                                                                \
    (dcgmHandle_t handle, dcgmGroupEntityPair_t* entities, unsigned int entity_count,                 \
     unsigned short* field_ids, unsigned int field_count, unsigned int flags,                         \
     dcgmFieldValue_v2* values),                                                                      \
    (handle, entities, entity_count, field_ids, field_count, flags, values),                          \
    dcgmEntitiesGetLatestValues)                                                                      \
  /* Which profiling fields a GPU offers, in which groups (older GPUs multiplex them) */              \
  X(ProfGetSupportedMetricGroups, Optional, (dcgmHandle_t handle, dcgmProfGetMetricGroups_v3* groups),\
    (handle, groups), dcgmProfGetSupportedMetricGroups)
// clang-format on
