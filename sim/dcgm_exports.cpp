// The exported C symbols of the simulated libdcgm, expanded from the one DCGM entry-point list
// (dcgm/entry_points.hpp), so the loader and this library cannot disagree on a signature.
#include <string_view>

#include "dcgm/entry_points.hpp"
#include "sim/dcgm_sim.hpp"
#include "sim/options.hpp"

#define GPUSCOPE_SIM_API __attribute__((visibility("default")))

namespace gpuscope::sim::dcgm_api {
namespace {

DcgmSim& sim() {
  return process_dcgm();
}

}  // namespace

dcgmReturn_t Init() {
  return sim().init(options_from_environment());
}
dcgmReturn_t Shutdown() {
  return sim().shutdown();
}
dcgmReturn_t Connect(const char* address, dcgmConnectV2Params_v2* params, dcgmHandle_t* handle) {
  return sim().connect(address, params, handle);
}
dcgmReturn_t Disconnect(dcgmHandle_t handle) {
  return sim().disconnect(handle);
}
dcgmReturn_t StartEmbedded(dcgmStartEmbeddedV2Params_v2* params) {
  return sim().start_embedded(params);
}
dcgmReturn_t StopEmbedded(dcgmHandle_t handle) {
  return sim().stop_embedded(handle);
}
dcgmReturn_t GetAllSupportedDevices(dcgmHandle_t handle, unsigned int* ids, int* count) {
  return sim().supported_devices(handle, ids, count);
}
dcgmReturn_t GroupCreate(dcgmHandle_t handle, unsigned int type, const char* name,
                         dcgmGpuGrp_t* group) {
  return sim().group_create(handle, type, name, group);
}
dcgmReturn_t GroupAddDevice(dcgmHandle_t handle, dcgmGpuGrp_t group, unsigned int gpu) {
  return sim().group_add_device(handle, group, gpu);
}
dcgmReturn_t GroupAddEntity(dcgmHandle_t handle, dcgmGpuGrp_t group, unsigned int entity_group,
                            dcgm_field_eid_t entity_id) {
  return sim().group_add_entity(handle, group, entity_group, entity_id);
}
dcgmReturn_t GetGpuInstanceHierarchy(dcgmHandle_t handle, dcgmMigHierarchy_v2* hierarchy) {
  return sim().instance_hierarchy(handle, hierarchy);
}
dcgmReturn_t GroupDestroy(dcgmHandle_t handle, dcgmGpuGrp_t group) {
  return sim().group_destroy(handle, group);
}
dcgmReturn_t FieldGroupCreate(dcgmHandle_t handle, int count, const unsigned short* ids,
                              const char* name, dcgmFieldGrp_t* field_group) {
  return sim().field_group_create(handle, count, ids, name, field_group);
}
dcgmReturn_t FieldGroupDestroy(dcgmHandle_t handle, dcgmFieldGrp_t field_group) {
  return sim().field_group_destroy(handle, field_group);
}
dcgmReturn_t WatchFields(dcgmHandle_t handle, dcgmGpuGrp_t group, dcgmFieldGrp_t field_group,
                         long long update_us, double max_keep_age_s, int max_keep_samples) {
  return sim().watch(handle, group, field_group, update_us, max_keep_age_s, max_keep_samples);
}
dcgmReturn_t UnwatchFields(dcgmHandle_t handle, dcgmGpuGrp_t group, dcgmFieldGrp_t field_group) {
  return sim().unwatch(handle, group, field_group);
}
dcgmReturn_t UpdateAllFields(dcgmHandle_t handle, int wait) {
  return sim().update_all(handle, wait);
}
dcgmReturn_t EntitiesGetLatestValues(dcgmHandle_t handle, dcgmGroupEntityPair_t* entities,
                                     unsigned int entity_count, unsigned short* field_ids,
                                     unsigned int field_count, unsigned int flags,
                                     dcgmFieldValue_v2* values) {
  return sim().latest_values(handle, entities, entity_count, field_ids, field_count, flags, values);
}
dcgmReturn_t ProfGetSupportedMetricGroups(dcgmHandle_t handle, dcgmProfGetMetricGroups_v3* groups) {
  return sim().metric_groups(handle, groups);
}

}  // namespace gpuscope::sim::dcgm_api

// Each call then spends what the scenario's driver_costs says it costs (sim/costs.hpp).
#define GPUSCOPE_SIM_DCGM_EXPORT(id, req, params, args, symbol)            \
  extern "C" GPUSCOPE_SIM_API dcgmReturn_t symbol params {                 \
    const dcgmReturn_t result = gpuscope::sim::dcgm_api::id args;          \
    const auto cost = gpuscope::sim::process_dcgm().call_cost_of(#symbol); \
    gpuscope::sim::spend_call_cost(cost.waits, cost.ns, std::nullopt);     \
    return result;                                                         \
  }
GPUSCOPE_DCGM_ENTRY_POINTS(GPUSCOPE_SIM_DCGM_EXPORT)
#undef GPUSCOPE_SIM_DCGM_EXPORT

// DCGM's error text export (there is no dcgmErrorString): NULL for a code it does not know.
extern "C" GPUSCOPE_SIM_API const char* errorString(dcgmReturn_t result) {
  // The simulator's own words for the codes it returns.
  switch (result) {
    case 0:
      return "OK";
    case -1:
      return "a parameter was bad";
    case -6:
      return "not supported";
    case -7:
      return "DCGM could not initialise";
    case -10:
      return "DCGM is not initialised";
    case -12:
      return "struct version mismatch";
    case -13:
      return "unknown field";
    case -14:
      return "no data yet";
    case -16:
      return "the field is not watched";
    case -18:
      return "the GPU is lost";
    case -21:
      return "no valid connection to the host engine";
    case -24:
      return "limit reached";
    case -25:
      return "DCGM library not found";
    case -29:
      return "DCGM must run as root to do this";
    case -33:
      return "the DCGM module that serves this request is not loaded";
    case -34:
      return "the resource is in use";
    case -35:
      return "the group is empty";
    case -36:
      return "profiling is not supported on this GPU";
    case -37:
      return "the profiling library failed";
    case -38:
      return "the profiling fields cannot be collected in one pass";
    default:
      return nullptr;
  }
}

// Not DCGM: why the last call failed, for gpuscope's messages about the simulated DCGM.
extern "C" GPUSCOPE_SIM_API const char* gpuscopeSimDcgmLastError(void) {
  return gpuscope::sim::process_dcgm().last_error();
}
