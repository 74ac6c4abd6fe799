// The simulated DCGM: the state behind libgpuscope-sim-dcgm.so's exports. It drives its own
// Driver over the same scenario as the simulated NVML (GPUSCOPE_SIM_SCENARIO, the same epoch and
// state file), so one scenario gives both libraries the same GPUs doing the same work.
//
// What it models (docs/scenarios.md, "dcgm"): a host engine to connect to or DCGM embedded; GPU
// and field groups; watches; profiling fields 1001-1012 as averages over the watch interval,
// blank until two samples exist (as DCGM on Hopper), blank while another profiler holds the
// counters; the device fields 54, 57, 203 and 250-253; metric groups that share counters on
// pre-Hopper GPUs; the faults of the scenario's "dcgm" object; and MIG: GPU-instance entities
// (DCGM_FE_GPU_I) numbered as DCGM numbers them, their hierarchy, their own profiling values, and
// DCGM's refusal to run embedded without root on a GPU in MIG mode.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dcgm/abi.hpp"
#include "sim/driver.hpp"

namespace gpuscope::sim {

// One profiling metric group of a GPU, as dcgmProfGetSupportedMetricGroups lists it.
struct DcgmMetricGroup {
  unsigned short major = 0;
  unsigned short minor = 0;
  std::vector<unsigned short> fields;
};

// The metric groups of a GPU: pre-Hopper GPUs share one set of SM counters between the pipe
// fields (several minor groups of one major); Hopper and newer (GPM) have no such limit.
std::vector<DcgmMetricGroup> dcgm_metric_groups(const GpuSpec& spec);

// Whether `fields` can be watched in one pass: at most one minor group per major.
bool dcgm_single_pass(const std::vector<DcgmMetricGroup>& groups,
                      const std::set<unsigned short>& fields);

class DcgmSim {
 public:
  explicit DcgmSim(const Clock& clock);

  // dcgmInit: loads the scenario `options` name (the exports pass the environment's).
  dcgmReturn_t init(const tl::expected<DriverOptions, std::string>& options);
  dcgmReturn_t shutdown();
  dcgmReturn_t connect(const char* address, dcgmConnectV2Params_v2* params, dcgmHandle_t* handle);
  dcgmReturn_t disconnect(dcgmHandle_t handle);
  dcgmReturn_t start_embedded(dcgmStartEmbeddedV2Params_v2* params);
  dcgmReturn_t stop_embedded(dcgmHandle_t handle);
  dcgmReturn_t supported_devices(dcgmHandle_t handle, unsigned int* ids, int* count);
  dcgmReturn_t group_create(dcgmHandle_t handle, unsigned int type, const char* name,
                            dcgmGpuGrp_t* group);
  dcgmReturn_t group_add_device(dcgmHandle_t handle, dcgmGpuGrp_t group, unsigned int gpu);
  dcgmReturn_t group_add_entity(dcgmHandle_t handle, dcgmGpuGrp_t group, unsigned int kind,
                                dcgm_field_eid_t id);
  dcgmReturn_t instance_hierarchy(dcgmHandle_t handle, dcgmMigHierarchy_v2* hierarchy);
  dcgmReturn_t group_destroy(dcgmHandle_t handle, dcgmGpuGrp_t group);
  dcgmReturn_t field_group_create(dcgmHandle_t handle, int count, const unsigned short* ids,
                                  const char* name, dcgmFieldGrp_t* field_group);
  dcgmReturn_t field_group_destroy(dcgmHandle_t handle, dcgmFieldGrp_t field_group);
  dcgmReturn_t watch(dcgmHandle_t handle, dcgmGpuGrp_t group, dcgmFieldGrp_t field_group,
                     long long update_us, double max_keep_age_s, int max_keep_samples);
  dcgmReturn_t unwatch(dcgmHandle_t handle, dcgmGpuGrp_t group, dcgmFieldGrp_t field_group);
  dcgmReturn_t update_all(dcgmHandle_t handle, int wait);
  dcgmReturn_t latest_values(dcgmHandle_t handle, dcgmGroupEntityPair_t* entities,
                             unsigned int entity_count, unsigned short* field_ids,
                             unsigned int field_count, unsigned int flags,
                             dcgmFieldValue_v2* values);
  dcgmReturn_t metric_groups(dcgmHandle_t handle, dcgmProfGetMetricGroups_v3* groups);

  // Why the last call failed, for the loader's messages (gpuscopeSimDcgmLastError).
  const char* last_error() const;
  // What a call costs by the scenario's driver_costs (sim/costs.hpp; none before init).
  CallCost call_cost_of(std::string_view symbol) const { return driver_.dcgm_call_cost(symbol); }

 private:
  // An entity: (DCGM_FE_GPU or DCGM_FE_GPU_I, its DCGM id).
  using Entity = std::pair<unsigned, unsigned>;
  struct Connection {
    bool embedded = false;
    std::map<dcgmGpuGrp_t, std::vector<Entity>> groups;
    std::map<dcgmFieldGrp_t, std::vector<unsigned short>> field_groups;
    std::map<std::pair<dcgmGpuGrp_t, dcgmFieldGrp_t>, long long> watches;  // -> update_us
    std::uint64_t metric_groups_calls = 0;  // for dcgm.metric_groups_answers
  };
  // One counter sample of an entity: its own activity and, for a GPU instance, its GPU's (the
  // fields DCGM answers at GPU level).
  struct Sample {
    Driver::Observation own;
    Levels gpu_integral{};
  };
  // What DCGM's cache holds for one entity: the last two samples of its profiling counters.
  struct Cache {
    std::optional<Sample> previous;
    std::optional<Sample> current;
    std::int64_t next_due_ns = 0;  // realtime of the next update on the watch's grid
    bool lost = false;
  };
  // A GPU instance as DCGM lists it: its entity id, its GPU and NVML's view of it.
  struct GpuInstance {
    unsigned entity_id = 0;
    unsigned ci_entity_id = 0;
    unsigned gpu = 0;
    Driver::InstanceObservation seen;
  };

  dcgmReturn_t fail(dcgmReturn_t code, std::string message);
  Connection* find(dcgmHandle_t handle);

  const Scenario& scenario() const { return *driver_.loaded_scenario(); }
  // The GPU instances of `gpu` that exist now, in DCGM's order and with its entity ids.
  std::vector<GpuInstance> gpu_instances(unsigned gpu);
  // The GPU instance entity `id` names now, if any.
  std::optional<GpuInstance> gpu_instance(unsigned id);
  // The GPU an entity is or belongs to, if it exists.
  std::optional<unsigned> gpu_of(const Entity& entity);
  // The fastest watch interval of any connection on `entity` for profiling fields (0:
  // unwatched), and whether `field` is watched on it.
  long long prof_interval_us(const Entity& entity) const;
  bool watched(const Entity& entity, unsigned short field) const;
  // Takes a new counter sample when the watch interval has passed since the last one.
  void refresh(const Entity& entity, bool force);
  bool counters_taken(std::int64_t from_ns, std::int64_t to_ns) const;
  dcgmReturn_t check_prof_watch(const Connection& connection, const std::vector<Entity>& entities,
                                const std::set<unsigned short>& prof);
  void fill_prof(const Entity& entity, unsigned short field, dcgmFieldValue_v2& value);
  void fill(const Entity& entity, unsigned short field, bool live, dcgmFieldValue_v2& value);
  void fill_device(unsigned gpu, unsigned short field, dcgmFieldValue_v2& value);

  Driver driver_;
  mutable std::mutex mutex_;
  int init_count_ = 0;
  std::uintptr_t next_id_ = 1;
  std::map<dcgmHandle_t, Connection> connections_;
  std::map<Entity, Cache> caches_;
  std::string last_error_;
};

DcgmSim& process_dcgm();

}  // namespace gpuscope::sim
