#include "dcgm/session.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

namespace gpuscope::dcgm {
namespace {

constexpr unsigned int kLiveData = 1;  // DCGM_FV_FLAG_LIVE_DATA
constexpr const char* kDefaultHostEngine = "localhost:5555";

// Group and field-group names must be unique in a host engine that others use too.
std::string unique_name(const char* what) {
  static std::atomic<unsigned> counter{0};
  return fmt::format("gpuscope-{}-{}-{}", what, getpid(), counter++);
}

}  // namespace

Session::Session(std::shared_ptr<const Library> library, const ConnectOptions& options)
    : library_(std::move(library)) {
  const FunctionTable& t = library_->table();
  if (const dcgmReturn_t code = t.Init.fn(); code != kOk) {
    throw Error("DCGM did not initialise", describe({code, "dcgmInit"}),
                "check the DCGM installation (datacenter-gpu-manager)");
  }
  const std::string& how = options.how;
  const bool try_engine = how != "embedded";
  const bool try_embedded = how == "auto" || how == "embedded";
  std::string engine_failure;
  bool requires_root = false;
  if (try_engine) {
    const std::string address = (how == "auto" || how == "hostengine") ? kDefaultHostEngine : how;
    const bool unix_socket = address.starts_with("unix:");
    const std::string target = unix_socket ? address.substr(5) : address;
    dcgmConnectV2Params_v2 params{};
    params.version = kConnectV2ParamsVersion;
    params.persistAfterDisconnect = 0;  // our watches go when we go
    params.timeoutMs = static_cast<unsigned>(options.timeout.count());
    params.addressIsUnixSocket = unix_socket ? 1 : 0;
    if (t.Connect.fn == nullptr) {
      engine_failure = "this libdcgm has no dcgmConnect_v2";
    } else if (const dcgmReturn_t code = t.Connect.fn(target.c_str(), &params, &handle_);
               code == kOk) {
      description_ = "nv-hostengine at " + address;
      return;
    } else {
      engine_failure =
          fmt::format("no nv-hostengine at {}: {}", address, describe({code, "dcgmConnect_v2"}));
    }
  }
  if (try_embedded) {
    dcgmStartEmbeddedV2Params_v2 params{};
    params.version = kStartEmbeddedV2ParamsVersion2;
    params.opMode = kOperationModeAuto;
    params.severity = -1;
    if (t.StartEmbedded.fn == nullptr) {
      engine_failure += (engine_failure.empty() ? "" : "; ") +
                        std::string("this libdcgm has no dcgmStartEmbedded_v2");
    } else if (const dcgmReturn_t code = t.StartEmbedded.fn(&params); code == kOk) {
      handle_ = params.dcgmHandle;
      embedded_ = true;
      description_ = "embedded in gpuscope";
      return;
    } else {
      engine_failure +=
          (engine_failure.empty() ? "" : "; ") +
          fmt::format("embedded DCGM did not start: {}", describe({code, "dcgmStartEmbedded_v2"}));
      requires_root = code == kRequiresRoot;
    }
  }
  t.Shutdown.fn();
  if (requires_root) {
    // DCGM reads MIG layouts through root-only NVML calls, so it refuses to start unprivileged
    // while a GPU is in MIG mode (docs/mig.md).
    throw Error(
        "DCGM must run as root while a GPU is in MIG mode (DCGM_ST_REQUIRES_ROOT): run gpuscope "
        "as root, start a root nv-hostengine (systemctl start nvidia-dcgm) for --dcgm auto to "
        "join, or use Hopper or newer, whose GPM needs neither");
  }
  throw Error("DCGM is installed but gpuscope cannot reach it", engine_failure,
              how == "embedded" ? "start nv-hostengine and use --dcgm auto, or run as a user "
                                  "that may start DCGM embedded"
                                : "start nv-hostengine (systemctl start nvidia-dcgm), name its "
                                  "address with --dcgm HOST:PORT, or use --dcgm embedded");
}

Session::~Session() {
  const FunctionTable& t = library_->table();
  if (embedded_ && t.StopEmbedded.fn != nullptr) {
    t.StopEmbedded.fn(handle_);
  } else if (!embedded_ && t.Disconnect.fn != nullptr) {
    t.Disconnect.fn(handle_);
  }
  t.Shutdown.fn();
}

std::string Session::describe(const Failure& failure) const {
  std::string text =
      fmt::format("{}: {} ({}, {})", failure.symbol, library_->error_string(failure.code),
                  status_name(failure.code), failure.code);
  if (const std::string reason = library_->simulator_reason(); !reason.empty()) {
    text += fmt::format(" [simulated: {}]", reason);
  }
  return text;
}

Expected<std::vector<unsigned>> Session::gpu_ids() const {
  unsigned int ids[kMaxNumDevices] = {};
  int count = 0;
  if (const dcgmReturn_t code = library_->table().GetAllSupportedDevices.fn(handle_, ids, &count);
      code != kOk) {
    return tl::unexpected(Failure{code, "dcgmGetAllSupportedDevices"});
  }
  count = std::clamp(count, 0, kMaxNumDevices);
  return std::vector<unsigned>(ids, ids + count);
}

Expected<std::string> Session::uuid(unsigned gpu_id) const {
  dcgmGroupEntityPair_t entity{kEntityGpu, gpu_id};
  unsigned short field = kDevUuid;
  auto value = std::make_unique<dcgmFieldValue_v2>();
  if (const dcgmReturn_t code = library_->table().EntitiesGetLatestValues.fn(
          handle_, &entity, 1, &field, 1, kLiveData, value.get());
      code != kOk) {
    return tl::unexpected(Failure{code, "dcgmEntitiesGetLatestValues"});
  }
  if (value->status != kOk) return tl::unexpected(Failure{value->status, "DCGM_FI_DEV_UUID"});
  const std::string text(value->value.str, strnlen(value->value.str, sizeof value->value.str));
  if (text.starts_with("<<<")) return tl::unexpected(Failure{kNoData, "DCGM_FI_DEV_UUID"});
  return text;
}

Expected<std::vector<MetricGroup>> Session::metric_groups(unsigned gpu_id) const {
  const auto& fn = library_->table().ProfGetSupportedMetricGroups.fn;
  if (fn == nullptr) return tl::unexpected(Failure{-20, "dcgmProfGetSupportedMetricGroups"});
  auto request = std::make_unique<dcgmProfGetMetricGroups_v3>();
  request->version = kProfGetMetricGroupsVersion3;
  request->gpuId = gpu_id;
  if (const dcgmReturn_t code = fn(handle_, request.get()); code != kOk) {
    return tl::unexpected(Failure{code, "dcgmProfGetSupportedMetricGroups"});
  }
  std::vector<MetricGroup> groups;
  const unsigned n = std::min<unsigned>(request->numMetricGroups, 10);
  for (unsigned i = 0; i < n; ++i) {
    const auto& g = request->metricGroups[i];
    const unsigned count = std::min<unsigned>(g.numFieldIds, 64);
    groups.push_back({g.majorId, g.minorId, {g.fieldIds, g.fieldIds + count}});
  }
  return groups;
}

Expected<std::vector<GpuInstanceEntity>> Session::gpu_instances() const {
  const auto& fn = library_->table().GetGpuInstanceHierarchy.fn;
  if (fn == nullptr) return tl::unexpected(Failure{-20, "dcgmGetGpuInstanceHierarchy"});
  auto hierarchy = std::make_unique<dcgmMigHierarchy_v2>();
  hierarchy->version = kMigHierarchyVersion2;
  if (const dcgmReturn_t code = fn(handle_, hierarchy.get()); code != kOk) {
    return tl::unexpected(Failure{code, "dcgmGetGpuInstanceHierarchy"});
  }
  std::vector<GpuInstanceEntity> out;
  const unsigned n = std::min(hierarchy->count, kMaxHierarchyInfo);
  for (unsigned i = 0; i < n; ++i) {
    const dcgmMigHierarchyInfo_v2& row = hierarchy->entityList[i];
    if (row.entity.entityGroupId != kEntityGpuI || row.parent.entityGroupId != kEntityGpu) {
      continue;
    }
    const dcgmMigEntityInfo_t& info = row.info;
    out.push_back({row.entity.entityId, row.parent.entityId,
                   std::string(info.gpuUuid, strnlen(info.gpuUuid, sizeof info.gpuUuid)),
                   info.nvmlInstanceId, info.nvmlMigProfileId, info.nvmlProfileSlices});
  }
  return out;
}

Expected<std::unique_ptr<Watch>> Watch::start(const Session& session,
                                              const std::vector<unsigned>& gpu_ids,
                                              const std::vector<unsigned short>& fields,
                                              std::chrono::microseconds interval) {
  std::vector<dcgmGroupEntityPair_t> entities;
  for (unsigned id : gpu_ids) entities.push_back({kEntityGpu, id});
  return start_entities(session, entities, fields, interval);
}

Expected<std::unique_ptr<Watch>> Watch::start_entities(
    const Session& session, const std::vector<dcgmGroupEntityPair_t>& entities,
    const std::vector<unsigned short>& fields, std::chrono::microseconds interval) {
  const FunctionTable& t = session.library().table();
  std::unique_ptr<Watch> watch(new Watch(session, fields));
  const dcgmHandle_t h = session.handle();
  const std::string group_name = unique_name("gpus");
  if (const dcgmReturn_t code =
          t.GroupCreate.fn(h, kGroupEmpty, group_name.c_str(), &watch->group_);
      code != kOk) {
    return tl::unexpected(Failure{code, "dcgmGroupCreate"});
  }
  watch->has_group_ = true;
  for (const dcgmGroupEntityPair_t& e : entities) {
    if (e.entityGroupId == kEntityGpu) {
      if (const dcgmReturn_t code = t.GroupAddDevice.fn(h, watch->group_, e.entityId);
          code != kOk) {
        return tl::unexpected(Failure{code, "dcgmGroupAddDevice"});
      }
    } else if (t.GroupAddEntity.fn == nullptr) {
      return tl::unexpected(Failure{-20, "dcgmGroupAddEntity"});  // FUNCTION_NOT_FOUND
    } else if (const dcgmReturn_t code =
                   t.GroupAddEntity.fn(h, watch->group_, e.entityGroupId, e.entityId);
               code != kOk) {
      return tl::unexpected(Failure{code, "dcgmGroupAddEntity"});
    }
  }
  const std::string fields_name = unique_name("fields");
  if (const dcgmReturn_t code =
          t.FieldGroupCreate.fn(h, static_cast<int>(fields.size()), fields.data(),
                                fields_name.c_str(), &watch->field_group_);
      code != kOk) {
    return tl::unexpected(Failure{code, "dcgmFieldGroupCreate"});
  }
  watch->has_field_group_ = true;
  // Keep a few samples only: gpuscope reads the latest value each tick.
  const double keep_age_s = std::max(1.0, 4.0 * static_cast<double>(interval.count()) / 1e6);
  if (const dcgmReturn_t code =
          t.WatchFields.fn(h, watch->group_, watch->field_group_, interval.count(), keep_age_s, 4);
      code != kOk) {
    return tl::unexpected(Failure{code, "dcgmWatchFields"});
  }
  watch->watching_ = true;
  return watch;
}

Watch::~Watch() {
  const FunctionTable& t = session_.library().table();
  const dcgmHandle_t h = session_.handle();
  if (watching_) t.UnwatchFields.fn(h, group_, field_group_);
  if (has_field_group_) t.FieldGroupDestroy.fn(h, field_group_);
  if (has_group_) t.GroupDestroy.fn(h, group_);
}

Status Watch::latest(unsigned gpu_id, std::vector<dcgmFieldValue_v2>& values) const {
  return latest(dcgmGroupEntityPair_t{kEntityGpu, gpu_id}, values);
}

Status Watch::latest(dcgmGroupEntityPair_t entity, std::vector<dcgmFieldValue_v2>& values) const {
  values.resize(fields_.size());
  std::vector<unsigned short> ids = fields_;  // the API takes them non-const
  if (const dcgmReturn_t code = session_.library().table().EntitiesGetLatestValues.fn(
          session_.handle(), &entity, 1, ids.data(), static_cast<unsigned>(ids.size()), 0,
          values.data());
      code != kOk) {
    return tl::unexpected(Failure{code, "dcgmEntitiesGetLatestValues"});
  }
  return {};
}

}  // namespace gpuscope::dcgm
