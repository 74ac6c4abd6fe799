// A DCGM session: dcgmInit, then a handle to a running nv-hostengine or to DCGM embedded in this
// process, and the watches made through it. On clusters that run dcgm-exporter an nv-hostengine
// already owns the profiling counters, so gpuscope joins it rather than starting a second DCGM
// that would fight it for them (docs/sources.md).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "dcgm/library.hpp"

namespace gpuscope::dcgm {

// How to reach DCGM: "auto" (the host engine at localhost:5555, else embedded), "embedded",
// "hostengine" (localhost:5555 only), or a host engine's address: "host[:port]", "unix:PATH".
struct ConnectOptions {
  std::string how = "auto";
  std::chrono::milliseconds timeout{1000};  // for reaching a host engine
};

// A DCGM call that failed: its status and the function (or the field it read).
using Failure = util::CallFailure<dcgmReturn_t>;
using Status = util::CallStatus<dcgmReturn_t>;
template <typename T>
using Expected = tl::expected<T, Failure>;

struct MetricGroup {
  unsigned short major = 0;
  unsigned short minor = 0;
  std::vector<unsigned short> fields;
};

// A GPU instance as DCGM's MIG hierarchy lists it (dcgmGetGpuInstanceHierarchy): DCGM's entity
// id for it (DCGM_FE_GPU_I; not NVML's GPU instance id), its GPU, and NVML's ids.
struct GpuInstanceEntity {
  unsigned entity_id = 0;
  unsigned gpu_id = 0;  // the parent's DCGM GPU id
  std::string gpu_uuid;
  unsigned gpu_instance_id = 0;  // NVML's
  unsigned profile_id = 0;       // NVML's profile ID
  unsigned slices = 0;
};

class Session {
 public:
  // Throws Error saying what was tried and why it failed (no host engine, embedded refused).
  Session(std::shared_ptr<const Library> library, const ConnectOptions& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const Library& library() const { return *library_; }
  dcgmHandle_t handle() const { return handle_; }
  bool embedded() const { return embedded_; }
  // "nv-hostengine at localhost:5555" or "embedded in gpuscope".
  const std::string& description() const { return description_; }

  // The GPUs DCGM supports, by DCGM GPU id.
  Expected<std::vector<unsigned>> gpu_ids() const;
  // A GPU's UUID (field 54, read live: it needs no watch).
  Expected<std::string> uuid(unsigned gpu_id) const;
  // The profiling metric groups of a GPU (dcgmProfGetSupportedMetricGroups).
  Expected<std::vector<MetricGroup>> metric_groups(unsigned gpu_id) const;

  // The GPU instances DCGM sees, GPU instance rows only (dcgmGetGpuInstanceHierarchy).
  Expected<std::vector<GpuInstanceEntity>> gpu_instances() const;

  // "dcgmWatchFields: <DCGM's words> (DCGM error -38)", with the simulator's reason when simulated.
  std::string describe(const Failure& failure) const;

 private:
  std::shared_ptr<const Library> library_;
  dcgmHandle_t handle_ = 0;
  bool embedded_ = false;
  std::string description_;
};

// Fields watched on a set of GPUs or other entities: an entity group, a field group and the watch,
// all undone by the destructor (so a host engine shared with dcgm-exporter is left as it was
// found).
class Watch {
 public:
  static Expected<std::unique_ptr<Watch>> start(const Session& session,
                                                const std::vector<unsigned>& gpu_ids,
                                                const std::vector<unsigned short>& fields,
                                                std::chrono::microseconds interval);
  // The same over any entities (GPU instances: DCGM_FE_GPU_I, added by dcgmGroupAddEntity).
  static Expected<std::unique_ptr<Watch>> start_entities(
      const Session& session, const std::vector<dcgmGroupEntityPair_t>& entities,
      const std::vector<unsigned short>& fields, std::chrono::microseconds interval);
  ~Watch();
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;

  const std::vector<unsigned short>& fields() const { return fields_; }
  // The latest value of every watched field of one GPU, in fields() order.
  Status latest(unsigned gpu_id, std::vector<dcgmFieldValue_v2>& values) const;
  // The same for any watched entity.
  Status latest(dcgmGroupEntityPair_t entity, std::vector<dcgmFieldValue_v2>& values) const;

 private:
  Watch(const Session& session, std::vector<unsigned short> fields)
      : session_(session), fields_(std::move(fields)) {}
  const Session& session_;
  std::vector<unsigned short> fields_;
  dcgmGpuGrp_t group_ = 0;
  dcgmFieldGrp_t field_group_ = 0;
  bool has_group_ = false, has_field_group_ = false, watching_ = false;
};

}  // namespace gpuscope::dcgm
