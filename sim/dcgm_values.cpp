// The simulated DCGM's values: the lazy refresh of watched fields on their update grid, and what
// each field reads for a GPU or a GPU instance (profiling levels from the GPU model, device
// fields, identity strings), blank where DCGM would be. The connections, groups and watches are
// in dcgm_sim.cpp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "sim/dcgm_sim.hpp"

namespace gpuscope::sim {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// A profiling field's level in the model; ratios are the level / 100, rates MiB/s -> bytes/s.
struct ProfField {
  unsigned short id;
  Activity level;
  bool rate;
};
constexpr ProfField kProfFields[] = {
    {dcgm::kProfGrEngineActive, Activity::Util, false},
    {dcgm::kProfSmActive, Activity::SmActive, false},
    {dcgm::kProfSmOccupancy, Activity::SmOccupancy, false},
    {dcgm::kProfTensorActive, Activity::Tensor, false},
    {dcgm::kProfDramActive, Activity::Dram, false},
    {dcgm::kProfFp64Active, Activity::Fp64, false},
    {dcgm::kProfFp32Active, Activity::Fp32, false},
    {dcgm::kProfFp16Active, Activity::Fp16, false},
    {dcgm::kProfPcieTxBytes, Activity::PcieTx, true},
    {dcgm::kProfPcieRxBytes, Activity::PcieRx, true},
    {dcgm::kProfNvlinkTxBytes, Activity::NvlinkTx, true},
    {dcgm::kProfNvlinkRxBytes, Activity::NvlinkRx, true},
};

const ProfField* prof_field(unsigned short id) {
  for (const ProfField& f : kProfFields) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

void set_blank(dcgmFieldValue_v2& value, bool rate_or_int) {
  if (rate_or_int) {
    value.fieldType = dcgm::kTypeInt64;
    value.value.i64 = dcgm::kInt64Blank;
  } else {
    value.fieldType = dcgm::kTypeDouble;
    value.value.dbl = dcgm::kFp64Blank;
  }
}

// The fields DCGM answers at GPU level, also when asked on a GPU instance (its GPU's value).
bool is_gpu_level(unsigned short id) {
  return (id >= dcgm::kProfPcieTxBytes && id <= dcgm::kProfNvlinkRxBytes) ||
         id == dcgm::kDevGpuUtil || id == dcgm::kDevUuid || id == dcgm::kDevPciBusId;
}

void set_string(dcgmFieldValue_v2& value, const std::string& text) {
  value.fieldType = 's';
  std::snprintf(value.value.str, sizeof value.value.str, "%s", text.c_str());
}

}  // namespace

void DcgmSim::refresh(const Entity& entity, bool force) {
  // DCGM updates a watched field on its own every interval; the simulator takes each update
  // lazily, at the first call after it fell due (the grid starts when the watch does).
  const long long interval_us = prof_interval_us(entity);
  if (interval_us == 0) return;
  const std::int64_t interval_ns = interval_us * 1000;
  Sample now;
  Cache& cache = caches_[entity];
  if (entity.first == dcgm::kEntityGpuI) {
    const std::optional<GpuInstance> instance = gpu_instance(entity.second);
    Driver::Observation gpu;
    if (!instance || driver_.observe(instance->gpu, gpu) != nvml::kSuccess) {
      cache.lost = true;
      return;
    }
    now.own = instance->seen.observation;
    now.gpu_integral = gpu.integral;
  } else if (const nvmlReturn_t result = driver_.observe(entity.second, now.own);
             result != nvml::kSuccess) {
    cache.lost = result == nvml::kErrorGpuIsLost;
    return;
  } else {
    now.gpu_integral = now.own.integral;
  }
  if (cache.current && !force && now.own.realtime_ns < cache.next_due_ns) return;
  if (cache.current && now.own.scenario_ns <= cache.current->own.scenario_ns) return;
  cache.previous = cache.current;
  cache.current = now;
  if (cache.next_due_ns == 0 || force) {
    cache.next_due_ns = now.own.realtime_ns + interval_ns;
  } else {
    const std::int64_t behind = (now.own.realtime_ns - cache.next_due_ns) / interval_ns;
    cache.next_due_ns += (behind + 1) * interval_ns;
  }
}

dcgmReturn_t DcgmSim::update_all(dcgmHandle_t handle, int wait) {
  (void)wait;
  std::lock_guard lock(mutex_);
  if (find(handle) == nullptr) return dcgm::kConnectionNotValid;
  std::vector<Entity> entities;
  for (const auto& entry : caches_) entities.push_back(entry.first);
  for (const Entity& entity : entities) refresh(entity, false);
  return dcgm::kOk;
}

bool DcgmSim::counters_taken(std::int64_t from_ns, std::int64_t to_ns) const {
  for (const CountersTaken& window : scenario().dcgm->counters_taken) {
    const auto start = static_cast<std::int64_t>(window.from_s * 1e9);
    const auto end = static_cast<std::int64_t>(window.to_s * 1e9);
    if (from_ns < end && to_ns > start) return true;
  }
  return false;
}

void DcgmSim::fill_prof(const Entity& entity, unsigned short field, dcgmFieldValue_v2& value) {
  const ProfField* prof = prof_field(field);
  set_blank(value, prof->rate);
  const Cache& cache = caches_[entity];
  if (!watched(entity, field)) {
    value.status = dcgm::kNotWatched;
    return;
  }
  if (cache.lost) {
    value.status = dcgm::kGpuIsLost;
    return;
  }
  if (!cache.previous || !cache.current) {
    value.status = dcgm::kNoData;  // the first average needs two samples
    if (cache.current) value.ts = cache.current->own.realtime_ns / 1000;
    return;
  }
  const auto& a = *cache.previous;
  const auto& b = *cache.current;
  value.ts = b.own.realtime_ns / 1000;
  if (counters_taken(a.own.scenario_ns, b.own.scenario_ns)) return;  // blank, as DCGM stores it
  const std::size_t m = index_of(prof->level);
  // A GPU instance answers its own activity, except for the fields DCGM keeps at GPU level.
  const bool gpu_level = is_gpu_level(field);
  const double seconds = static_cast<double>(b.own.scenario_ns - a.own.scenario_ns) / 1e9;
  const double average = ((gpu_level ? b.gpu_integral[m] : b.own.integral[m]) -
                          (gpu_level ? a.gpu_integral[m] : a.own.integral[m])) /
                         seconds;
  if (prof->rate) {
    value.value.i64 = std::llround(average * kMiB);
  } else {
    value.value.dbl = std::clamp(average / 100.0, 0.0, 1.0);  // a fraction of the entity
  }
}

void DcgmSim::fill(const Entity& entity, unsigned short field, bool live,
                   dcgmFieldValue_v2& value) {
  value.status = dcgm::kOk;
  if (prof_field(field) != nullptr) return fill_prof(entity, field, value);
  if (!live && !watched(entity, field)) {
    set_blank(value, true);
    value.status = dcgm::kNotWatched;
    return;
  }
  if (entity.first == dcgm::kEntityGpu) return fill_device(entity.second, field, value);
  const std::optional<GpuInstance> instance = gpu_instance(entity.second);
  if (is_gpu_level(field)) return fill_device(instance->gpu, field, value);  // DCGM's remap
  // The frame buffer fields are the instance's own memory.
  const MigProfile& profile = *instance->seen.profile;
  const auto used = std::llround(instance->seen.observation.memory_used_mib);
  value.ts = instance->seen.observation.realtime_ns / 1000;
  value.fieldType = dcgm::kTypeInt64;
  switch (field) {
    case dcgm::kDevFbTotal:
      value.value.i64 = static_cast<long long>(profile.memory_mib);
      break;
    case dcgm::kDevFbFree:
      value.value.i64 = static_cast<long long>(profile.memory_mib) - used;
      break;
    case dcgm::kDevFbUsed:
      value.value.i64 = used;
      break;
    case dcgm::kDevFbReserved:
      value.value.i64 = 0;
      break;
    default:
      set_blank(value, true);
      value.status = -13;  // UNKNOWN_FIELD
  }
}

void DcgmSim::fill_device(unsigned gpu, unsigned short field, dcgmFieldValue_v2& value) {
  const GpuConfig& config = scenario().gpus[gpu];
  Driver::Observation now;
  const nvmlReturn_t observed = driver_.observe(gpu, now);
  if (observed != nvml::kSuccess) {
    set_blank(value, field != dcgm::kDevUuid && field != dcgm::kDevPciBusId);
    value.status = observed == nvml::kErrorGpuIsLost ? dcgm::kGpuIsLost : -8;
    return;
  }
  value.ts = now.realtime_ns / 1000;
  const GpuSpec& spec = config.spec;
  const auto used =
      std::min<long long>(std::llround(now.memory_used_mib),
                          static_cast<long long>(spec.memory_mib) - spec.reserved_mib);
  value.fieldType = dcgm::kTypeInt64;
  switch (field) {
    case dcgm::kDevUuid:
      set_string(value, config.uuid);
      break;
    case dcgm::kDevPciBusId:
      set_string(value, config.pci_bus_id);
      break;
    case dcgm::kDevGpuUtil:
      value.value.i64 = std::lround(now.levels[index_of(Activity::Util)]);
      break;
    case dcgm::kDevFbTotal:
      value.value.i64 = spec.memory_mib;
      break;
    case dcgm::kDevFbFree:
      value.value.i64 = static_cast<long long>(spec.memory_mib) - spec.reserved_mib - used;
      break;
    case dcgm::kDevFbUsed:
      value.value.i64 = used;
      break;
    case dcgm::kDevFbReserved:
      value.value.i64 = spec.reserved_mib;
      break;
    default:
      set_blank(value, true);
      value.status = -13;  // UNKNOWN_FIELD
  }
}

dcgmReturn_t DcgmSim::latest_values(dcgmHandle_t handle, dcgmGroupEntityPair_t* entities,
                                    unsigned int entity_count, unsigned short* field_ids,
                                    unsigned int field_count, unsigned int flags,
                                    dcgmFieldValue_v2* values) {
  std::lock_guard lock(mutex_);
  if (find(handle) == nullptr) return dcgm::kConnectionNotValid;
  if (entities == nullptr || field_ids == nullptr || values == nullptr || entity_count == 0 ||
      field_count == 0) {
    return -1;
  }
  const bool live = (flags & 1U) != 0;  // DCGM_FV_FLAG_LIVE_DATA
  std::size_t k = 0;
  for (unsigned int e = 0; e < entity_count; ++e) {
    const Entity entity{entities[e].entityGroupId, entities[e].entityId};
    const bool known = gpu_of(entity).has_value();
    if (known) refresh(entity, false);
    for (unsigned int f = 0; f < field_count; ++f, ++k) {
      dcgmFieldValue_v2& value = values[k];
      std::memset(&value, 0, offsetof(dcgmFieldValue_v2, value) + sizeof(std::int64_t));
      value.version = dcgm::kFieldValueV2Version;
      value.entityGroupId = entity.first;
      value.entityId = entity.second;
      value.fieldId = field_ids[f];
      if (!known) {
        set_blank(value, true);
        value.status = -1;
        continue;
      }
      fill(entity, field_ids[f], live, value);
    }
  }
  return dcgm::kOk;
}

dcgmReturn_t DcgmSim::metric_groups(dcgmHandle_t handle, dcgmProfGetMetricGroups_v3* groups) {
  std::lock_guard lock(mutex_);
  Connection* connection = find(handle);
  if (connection == nullptr) return dcgm::kConnectionNotValid;
  if (groups == nullptr) return -1;
  if (groups->version != dcgm::kProfGetMetricGroupsVersion3) return -12;
  if (groups->gpuId >= scenario().gpus.size()) return -1;
  const DcgmSpec& spec = *scenario().dcgm;
  if (spec.metric_groups_answers &&
      connection->metric_groups_calls++ >= *spec.metric_groups_answers) {
    return fail(dcgm::kConnectionNotValid,
                "the host engine stopped answering (scenario fault: dcgm.metric_groups_answers)");
  }
  if (spec.profiling == DcgmProfiling::ModuleMissing) {
    return fail(dcgm::kModuleNotLoaded, "the profiling module is not loaded (scenario fault)");
  }
  if (spec.profiling == DcgmProfiling::Unsupported) {
    return fail(dcgm::kProfilingNotSupported, "these GPUs have no profiling counters");
  }
  const auto list = dcgm_metric_groups(scenario().gpus[groups->gpuId].spec);
  groups->numMetricGroups = static_cast<unsigned>(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    dcgmProfMetricGroupInfo_v2& out = groups->metricGroups[i];
    out = {};
    out.majorId = list[i].major;
    out.minorId = list[i].minor;
    out.numFieldIds = static_cast<unsigned>(list[i].fields.size());
    std::copy(list[i].fields.begin(), list[i].fields.end(), out.fieldIds);
  }
  return dcgm::kOk;
}

}  // namespace gpuscope::sim
