// The simulated DCGM: its connections (embedded or to a host engine), entity and field groups,
// watches and the profiling module's metric groups and constraints. What a field reads is in
// dcgm_values.cpp.
#include "sim/dcgm_sim.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace gpuscope::sim {
namespace {

constexpr std::size_t kMaxGroups = 64;   // DCGM_MAX_NUM_GROUPS
constexpr int kMaxFieldsPerGroup = 128;  // DCGM_MAX_FIELD_IDS_PER_FIELD_GROUP

thread_local std::string t_last_error;

bool is_prof(unsigned short id) {
  return id >= 1001 && id <= 1096;
}

bool is_device_field(unsigned short id) {
  return id == dcgm::kDevUuid || id == dcgm::kDevPciBusId || id == dcgm::kDevGpuUtil ||
         (id >= dcgm::kDevFbTotal && id <= dcgm::kDevFbReserved);
}

// "localhost:5555" for "127.0.0.1", "localhost" and either with :5555; sockets as "unix:PATH".
std::string normalise_address(std::string address, bool unix_socket) {
  if (unix_socket) return "unix:" + address;
  if (address.starts_with("unix:")) return address;
  if (address.find(':') == std::string::npos) address += ":5555";
  if (address.starts_with("127.0.0.1:")) address = "localhost" + address.substr(9);
  return address;
}

// NVML's GPU instance profile index of a profile ID (nvml.h NVML_GPU_INSTANCE_PROFILE_*): DCGM
// lists a GPU's instances profile index by profile index.
unsigned profile_index(unsigned profile_id) {
  switch (profile_id) {
    case 19:
      return 0;  // 1g
    case 14:
      return 1;  // 2g
    case 9:
      return 2;  // 3g
    case 5:
      return 3;  // 4g
    case 0:
      return 4;  // 7g
    case 20:
      return 7;  // 1g+me
    case 15:
      return 9;  // 1g, double memory
    default:
      return 100 + profile_id;
  }
}

}  // namespace

std::vector<DcgmMetricGroup> dcgm_metric_groups(const GpuSpec& spec) {
  std::vector<DcgmMetricGroup> groups;
  if (spec.gpm) {
    // Hopper and newer: DCGM reads GPM, which has no counter conflicts; one major each.
    unsigned short major = 0;
    groups.push_back({major++, 0, {1001}});
    groups.push_back({major++, 0, {1002, 1003}});
    groups.push_back({major++, 0, {1004}});
    groups.push_back({major++, 0, {1005}});
    groups.push_back({major++, 0, {1006, 1007, 1008}});
    groups.push_back({major++, 0, {1009, 1010}});
    if (spec.nvlink) groups.push_back({major++, 0, {1011, 1012}});
    return groups;
  }
  // Volta and Ampere: the SM counters hold SM active and occupancy with one pipe group at a time.
  groups.push_back({0, 0, {1002, 1003, 1004, 1007}});
  groups.push_back({0, 1, {1002, 1003, 1006}});
  groups.push_back({0, 2, {1002, 1003, 1008}});
  groups.push_back({1, 0, {1005}});
  groups.push_back({2, 0, {1009, 1010}});
  groups.push_back({3, 0, {1001}});
  if (spec.nvlink) groups.push_back({4, 0, {1011, 1012}});
  return groups;
}

bool dcgm_single_pass(const std::vector<DcgmMetricGroup>& groups,
                      const std::set<unsigned short>& fields) {
  // Every field must be in some group, and the groups used must be one minor per major: try each
  // choice of minor per major (a handful of groups: exhaustive is fine).
  std::map<unsigned short, std::vector<const DcgmMetricGroup*>> by_major;
  for (const auto& group : groups) by_major[group.major].push_back(&group);
  std::vector<std::vector<const DcgmMetricGroup*>> choices;
  for (auto& [major, list] : by_major) choices.push_back(list);
  std::vector<std::size_t> pick(choices.size(), 0);
  while (true) {
    std::set<unsigned short> covered;
    for (std::size_t k = 0; k < choices.size(); ++k) {
      covered.insert(choices[k][pick[k]]->fields.begin(), choices[k][pick[k]]->fields.end());
    }
    if (std::includes(covered.begin(), covered.end(), fields.begin(), fields.end())) return true;
    std::size_t k = 0;
    while (k < choices.size() && ++pick[k] == choices[k].size()) pick[k++] = 0;
    if (k == choices.size()) return false;
  }
}

DcgmSim::DcgmSim(const Clock& clock) : driver_(clock) {}

dcgmReturn_t DcgmSim::fail(dcgmReturn_t code, std::string message) {
  t_last_error = std::move(message);
  return code;
}

const char* DcgmSim::last_error() const {
  return t_last_error.c_str();
}

dcgmReturn_t DcgmSim::init(const tl::expected<DriverOptions, std::string>& options) {
  std::lock_guard lock(mutex_);
  if (init_count_ == 0) {
    const nvmlReturn_t loaded = driver_.init(options);
    if (loaded != nvml::kSuccess) {
      return fail(-7, std::string("the simulated GPUs did not load: ") + driver_.last_error());
    }
    if (!driver_.loaded_scenario()->dcgm) {
      driver_.shutdown();
      return fail(-25,
                  "the scenario installs no DCGM (it has no \"dcgm\" object; docs/scenarios.md)");
    }
    caches_.clear();
  }
  ++init_count_;
  return dcgm::kOk;
}

dcgmReturn_t DcgmSim::shutdown() {
  std::lock_guard lock(mutex_);
  if (init_count_ == 0) return -10;  // UNINITIALIZED
  if (--init_count_ == 0) {
    connections_.clear();
    caches_.clear();
    driver_.shutdown();
  }
  return dcgm::kOk;
}

DcgmSim::Connection* DcgmSim::find(dcgmHandle_t handle) {
  auto it = connections_.find(handle);
  return it == connections_.end() ? nullptr : &it->second;
}

dcgmReturn_t DcgmSim::connect(const char* address, dcgmConnectV2Params_v2* params,
                              dcgmHandle_t* handle) {
  std::lock_guard lock(mutex_);
  if (init_count_ == 0) return -10;
  if (address == nullptr || params == nullptr || handle == nullptr) return -1;
  if (params->version != dcgm::kConnectV2ParamsVersion) return -12;  // VER_MISMATCH
  const auto& engine = scenario().dcgm->hostengine;
  const std::string wanted = normalise_address(address, params->addressIsUnixSocket != 0);
  if (!engine || normalise_address(*engine, false) != wanted) {
    return fail(dcgm::kConnectionNotValid,
                "no nv-hostengine listens on " + wanted +
                    (engine ? " (the scenario's listens on " + *engine + ")" : ""));
  }
  *handle = next_id_++;
  connections_[*handle] = Connection{};
  return dcgm::kOk;
}

dcgmReturn_t DcgmSim::disconnect(dcgmHandle_t handle) {
  std::lock_guard lock(mutex_);
  if (init_count_ == 0) return -10;
  const Connection* connection = find(handle);
  if (connection == nullptr || connection->embedded) return -1;
  connections_.erase(handle);
  return dcgm::kOk;
}

dcgmReturn_t DcgmSim::start_embedded(dcgmStartEmbeddedV2Params_v2* params) {
  std::lock_guard lock(mutex_);
  if (init_count_ == 0) return -10;
  if (params == nullptr) return -1;
  if (params->version != dcgm::kStartEmbeddedV2ParamsVersion2) return -12;
  if (params->opMode != dcgm::kOperationModeAuto && params->opMode != dcgm::kOperationModeManual) {
    return -1;
  }
  if (!scenario().dcgm->embedded) {
    return fail(-7, "DCGM cannot start embedded here (the scenario's dcgm.embedded is false)");
  }
  for (std::size_t gpu = 0; gpu < scenario().gpus.size(); ++gpu) {
    if (!driver_.privileged() && mig_enabled(scenario().gpus[gpu])) {
      return fail(dcgm::kRequiresRoot,
                  "DCGM must be run as root if MIG mode is enabled (GPU " + std::to_string(gpu) +
                      " is in MIG mode, and the scenario's privileged is false or "
                      "GPUSCOPE_SIM_PRIVILEGED=0)");
    }
  }
  params->dcgmHandle = next_id_++;
  connections_[params->dcgmHandle] = Connection{true, {}, {}, {}, 0};
  return dcgm::kOk;
}

dcgmReturn_t DcgmSim::stop_embedded(dcgmHandle_t handle) {
  std::lock_guard lock(mutex_);
  if (init_count_ == 0) return -10;
  const Connection* connection = find(handle);
  if (connection == nullptr || !connection->embedded) return -1;
  connections_.erase(handle);
  return dcgm::kOk;
}

dcgmReturn_t DcgmSim::supported_devices(dcgmHandle_t handle, unsigned int* ids, int* count) {
  std::lock_guard lock(mutex_);
  if (find(handle) == nullptr) return dcgm::kConnectionNotValid;
  if (ids == nullptr || count == nullptr) return -1;
  const auto n = std::min<std::size_t>(scenario().gpus.size(), dcgm::kMaxNumDevices);
  for (std::size_t i = 0; i < n; ++i) ids[i] = static_cast<unsigned>(i);
  *count = static_cast<int>(n);
  return dcgm::kOk;
}

std::vector<DcgmSim::GpuInstance> DcgmSim::gpu_instances(unsigned gpu) {
  std::vector<Driver::InstanceObservation> seen;
  if (driver_.observe_instances(gpu, seen) != nvml::kSuccess) return {};
  // DcgmCacheManager numbers a GPU's instances gpuId * maxGpcs + k, k counting them profile
  // index by profile index (one compute instance each here, numbered the same way).
  std::stable_sort(seen.begin(), seen.end(), [](const auto& a, const auto& b) {
    const unsigned pa = profile_index(a.profile->id), pb = profile_index(b.profile->id);
    return pa != pb ? pa < pb : a.gpu_instance_id < b.gpu_instance_id;
  });
  std::vector<GpuInstance> out;
  for (std::size_t k = 0; k < seen.size(); ++k) {
    const auto id = static_cast<unsigned>(gpu * kMaxMigDevices + k);
    out.push_back({id, id, gpu, seen[k]});
  }
  return out;
}

std::optional<DcgmSim::GpuInstance> DcgmSim::gpu_instance(unsigned id) {
  const unsigned gpu = id / kMaxMigDevices;
  if (gpu >= scenario().gpus.size()) return std::nullopt;
  for (const GpuInstance& instance : gpu_instances(gpu)) {
    if (instance.entity_id == id) return instance;
  }
  return std::nullopt;
}

std::optional<unsigned> DcgmSim::gpu_of(const Entity& entity) {
  if (entity.first == dcgm::kEntityGpu && entity.second < scenario().gpus.size()) {
    return entity.second;
  }
  if (entity.first == dcgm::kEntityGpuI) {
    if (auto instance = gpu_instance(entity.second)) return instance->gpu;
  }
  return std::nullopt;
}

dcgmReturn_t DcgmSim::group_create(dcgmHandle_t handle, unsigned int type, const char* name,
                                   dcgmGpuGrp_t* group) {
  std::lock_guard lock(mutex_);
  Connection* connection = find(handle);
  if (connection == nullptr) return dcgm::kConnectionNotValid;
  if (name == nullptr || group == nullptr) return -1;
  if (connection->groups.size() >= kMaxGroups) return -24;  // MAX_LIMIT
  std::vector<Entity> entities;
  if (type == dcgm::kGroupDefault) {
    for (unsigned i = 0; i < scenario().gpus.size(); ++i)
      entities.emplace_back(dcgm::kEntityGpu, i);
  } else if (type != dcgm::kGroupEmpty) {
    return -1;
  }
  *group = next_id_++;
  connection->groups[*group] = entities;
  return dcgm::kOk;
}

dcgmReturn_t DcgmSim::group_add_device(dcgmHandle_t handle, dcgmGpuGrp_t group, unsigned int gpu) {
  return group_add_entity(handle, group, dcgm::kEntityGpu, gpu);
}

dcgmReturn_t DcgmSim::group_add_entity(dcgmHandle_t handle, dcgmGpuGrp_t group, unsigned int kind,
                                       dcgm_field_eid_t id) {
  std::lock_guard lock(mutex_);
  Connection* connection = find(handle);
  if (connection == nullptr) return dcgm::kConnectionNotValid;
  auto it = connection->groups.find(group);
  if (it == connection->groups.end()) return -1;
  const Entity entity{kind, id};
  if (kind != dcgm::kEntityGpu && kind != dcgm::kEntityGpuI) {
    return fail(-1, "the simulator groups GPUs and GPU instances only");
  }
  if (!gpu_of(entity)) {
    return fail(-1, (kind == dcgm::kEntityGpu ? "no GPU " : "no GPU instance entity ") +
                        std::to_string(id));
  }
  if (std::find(it->second.begin(), it->second.end(), entity) == it->second.end()) {
    it->second.push_back(entity);
  }
  return dcgm::kOk;
}

dcgmReturn_t DcgmSim::instance_hierarchy(dcgmHandle_t handle, dcgmMigHierarchy_v2* hierarchy) {
  std::lock_guard lock(mutex_);
  if (find(handle) == nullptr) return dcgm::kConnectionNotValid;
  if (hierarchy == nullptr) return -1;
  if (hierarchy->version != dcgm::kMigHierarchyVersion2) return -12;
  hierarchy->count = 0;
  for (unsigned gpu = 0; gpu < scenario().gpus.size(); ++gpu) {
    for (const GpuInstance& instance : gpu_instances(gpu)) {
      if (hierarchy->count + 2 > dcgm::kMaxHierarchyInfo) return dcgm::kOk;
      // The GPU instance, then its one compute instance (whose parent it is).
      dcgmMigHierarchyInfo_v2& gi = hierarchy->entityList[hierarchy->count++];
      gi = {};
      gi.entity = {dcgm::kEntityGpuI, instance.entity_id};
      gi.parent = {dcgm::kEntityGpu, gpu};
      std::snprintf(gi.info.gpuUuid, sizeof gi.info.gpuUuid, "%s",
                    scenario().gpus[gpu].uuid.c_str());
      gi.info.nvmlGpuIndex = gpu;
      gi.info.nvmlInstanceId = instance.seen.gpu_instance_id;
      gi.info.nvmlComputeInstanceId = ~0U;
      gi.info.nvmlMigProfileId = instance.seen.profile->id;
      gi.info.nvmlProfileSlices = instance.seen.profile->compute_slices;
      dcgmMigHierarchyInfo_v2& ci = hierarchy->entityList[hierarchy->count++];
      ci = gi;
      ci.entity = {dcgm::kEntityGpuCi, instance.ci_entity_id};
      ci.parent = gi.entity;
      ci.info.nvmlComputeInstanceId = instance.seen.compute_instance_id;
      // A compute instance spanning its GPU instance: NVML's CI profile of that many slices.
      const unsigned slices = instance.seen.profile->compute_slices;
      ci.info.nvmlMigProfileId = slices == 7 ? 4 : slices - 1;
    }
  }
  return dcgm::kOk;
}

dcgmReturn_t DcgmSim::group_destroy(dcgmHandle_t handle, dcgmGpuGrp_t group) {
  std::lock_guard lock(mutex_);
  Connection* connection = find(handle);
  if (connection == nullptr) return dcgm::kConnectionNotValid;
  if (connection->groups.erase(group) == 0) return -1;
  std::erase_if(connection->watches, [&](const auto& w) { return w.first.first == group; });
  return dcgm::kOk;
}

dcgmReturn_t DcgmSim::field_group_create(dcgmHandle_t handle, int count, const unsigned short* ids,
                                         const char* name, dcgmFieldGrp_t* field_group) {
  std::lock_guard lock(mutex_);
  Connection* connection = find(handle);
  if (connection == nullptr) return dcgm::kConnectionNotValid;
  if (ids == nullptr || name == nullptr || field_group == nullptr || count < 1 ||
      count > kMaxFieldsPerGroup) {
    return -1;
  }
  if (scenario().dcgm->refuse_field_groups) {
    return fail(-24,
                "the host engine has no room for another field group (scenario fault "
                "dcgm.refuse_field_groups)");
  }
  for (int i = 0; i < count; ++i) {
    if (!is_prof(ids[i]) && !is_device_field(ids[i])) {
      return fail(-13, "field " + std::to_string(ids[i]) + " is not one the simulator knows");
    }
  }
  *field_group = next_id_++;
  connection->field_groups[*field_group] = std::vector<unsigned short>(ids, ids + count);
  return dcgm::kOk;
}

dcgmReturn_t DcgmSim::field_group_destroy(dcgmHandle_t handle, dcgmFieldGrp_t field_group) {
  std::lock_guard lock(mutex_);
  Connection* connection = find(handle);
  if (connection == nullptr) return dcgm::kConnectionNotValid;
  if (connection->field_groups.erase(field_group) == 0) return -1;
  std::erase_if(connection->watches, [&](const auto& w) { return w.first.second == field_group; });
  return dcgm::kOk;
}

dcgmReturn_t DcgmSim::check_prof_watch(const Connection& connection,
                                       const std::vector<Entity>& entities,
                                       const std::set<unsigned short>& prof) {
  const DcgmSpec& spec = *scenario().dcgm;
  if (spec.profiling == DcgmProfiling::ModuleMissing) {
    return fail(dcgm::kModuleNotLoaded, "the profiling module is not loaded (scenario fault)");
  }
  if (spec.profiling == DcgmProfiling::Unsupported) {
    return fail(dcgm::kProfilingNotSupported, "these GPUs have no profiling counters");
  }
  if (connection.embedded && spec.hostengine) {
    return fail(dcgm::kInUse,
                "the profiling counters are held by the nv-hostengine on " + *spec.hostengine);
  }
  for (const Entity& entity : entities) {
    const std::optional<unsigned> gpu = gpu_of(entity);
    if (!gpu) return fail(-1, "an entity of the group no longer exists");
    // A GPU instance offers its GPU's metric groups.
    const auto groups = dcgm_metric_groups(scenario().gpus[*gpu].spec);
    std::set<unsigned short> offered;
    for (const auto& mg : groups) offered.insert(mg.fields.begin(), mg.fields.end());
    for (unsigned short id : prof) {
      if (offered.count(id) == 0) {
        return fail(dcgm::kProfilingNotSupported,
                    "GPU " + std::to_string(*gpu) + " has no field " + std::to_string(id));
      }
    }
    if (spec.multipass && !dcgm_single_pass(groups, prof)) {
      return fail(dcgm::kProfilingMultiPass,
                  "the fields need more than one pass of the counters (scenario fault "
                  "dcgm.multipass)");
    }
  }
  return dcgm::kOk;
}

dcgmReturn_t DcgmSim::watch(dcgmHandle_t handle, dcgmGpuGrp_t group, dcgmFieldGrp_t field_group,
                            long long update_us, double max_keep_age_s, int max_keep_samples) {
  std::lock_guard lock(mutex_);
  Connection* connection = find(handle);
  if (connection == nullptr) return dcgm::kConnectionNotValid;
  auto g = connection->groups.find(group);
  auto f = connection->field_groups.find(field_group);
  if (g == connection->groups.end() || f == connection->field_groups.end() || update_us <= 0 ||
      max_keep_age_s < 0 || max_keep_samples < 0) {
    return -1;
  }
  if (g->second.empty()) return -35;  // GROUP_IS_EMPTY
  std::set<unsigned short> prof;
  for (unsigned short id : f->second) {
    if (is_prof(id)) prof.insert(id);
  }
  if (!prof.empty()) {
    if (const dcgmReturn_t refused = check_prof_watch(*connection, g->second, prof);
        refused != dcgm::kOk) {
      return refused;
    }
  }
  connection->watches[{group, field_group}] = update_us;
  // The first sample is taken when the watch starts; the first average needs a second one.
  for (const Entity& entity : g->second) {
    if (!prof.empty() && !caches_[entity].current) refresh(entity, true);
  }
  return dcgm::kOk;
}

dcgmReturn_t DcgmSim::unwatch(dcgmHandle_t handle, dcgmGpuGrp_t group, dcgmFieldGrp_t field_group) {
  std::lock_guard lock(mutex_);
  Connection* connection = find(handle);
  if (connection == nullptr) return dcgm::kConnectionNotValid;
  if (connection->watches.erase({group, field_group}) == 0) return dcgm::kNotWatched;
  std::erase_if(caches_, [&](const auto& entry) { return prof_interval_us(entry.first) == 0; });
  return dcgm::kOk;
}

long long DcgmSim::prof_interval_us(const Entity& entity) const {
  long long fastest = 0;
  for (const auto& [id, connection] : connections_) {
    for (const auto& [key, update_us] : connection.watches) {
      const auto& entities = connection.groups.at(key.first);
      const auto& fields = connection.field_groups.at(key.second);
      if (std::find(entities.begin(), entities.end(), entity) == entities.end()) continue;
      if (std::none_of(fields.begin(), fields.end(), is_prof)) continue;
      fastest = fastest == 0 ? update_us : std::min(fastest, update_us);
    }
  }
  return fastest;
}

bool DcgmSim::watched(const Entity& entity, unsigned short field) const {
  for (const auto& [id, connection] : connections_) {
    for (const auto& [key, update_us] : connection.watches) {
      const auto& entities = connection.groups.at(key.first);
      const auto& fields = connection.field_groups.at(key.second);
      if (std::find(entities.begin(), entities.end(), entity) != entities.end() &&
          std::find(fields.begin(), fields.end(), field) != fields.end()) {
        return true;
      }
    }
  }
  return false;
}

DcgmSim& process_dcgm() {
  // Never destroyed: other threads may call in while the process exits (as for the NVML sim).
  static auto* sim = new DcgmSim(system_clock());
  return *sim;
}

}  // namespace gpuscope::sim
