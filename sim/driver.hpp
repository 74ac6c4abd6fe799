// The simulated driver: the nvmlInit reference count, the scenario and its devices, faults, the
// shared state file and the GPM samples, all behind one mutex. The exported NVML functions
// (api_*.cpp) are thin wrappers over one process-wide Driver; tests build their own.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nvml/abi.hpp"
#include "sim/clock.hpp"
#include "sim/entries.hpp"
#include "sim/gpu_model.hpp"
#include "sim/handles.hpp"
#include "sim/mig.hpp"
#include "sim/options.hpp"
#include "sim/scenario.hpp"
#include "sim/state_file.hpp"

namespace gpuscope::sim {

struct SimDevice {
  SimDevice(const GpuConfig& config, std::uint64_t seed, std::size_t index,
            unsigned initial_limit_mw, LockedClocks initial_lock)
      : model(config, seed, index, initial_limit_mw, initial_lock),
        mig_handles(config.mig_devices.size() + (config.mig ? config.mig->instances.size() : 0),
                    nvmlDevice_st{index}) {
    handle.index = index;
    if (!config.mig) return;
    for (const MigInstanceSpec& spec : config.mig->instances) {
      instances.emplace_back(spec, *find_mig_profile(config.spec.model, spec.profile));
    }
  }
  nvmlDevice_st handle;
  GpuModel model;
  // One handle per config().mig_devices entry, in that order; never resized, so the addresses
  // handed out stay valid until nvmlShutdown.
  std::vector<nvmlDevice_st> mig_handles;
  // The "mig" instances; instance i's handle is mig_handles[mig_devices.size() + i].
  std::vector<MigInstance> instances;
  // The instance a handle names, or nullptr (the GPU's handle, a "mig_devices" handle).
  MigInstance* instance_of(nvmlDevice_t h) {
    const std::size_t legacy = model.config().mig_devices.size();
    for (std::size_t i = 0; i < instances.size(); ++i) {
      if (&mig_handles[legacy + i] == h) return &instances[i];
    }
    return nullptr;
  }
  std::int64_t lost_at_ns = INT64_MAX;
  std::int64_t limit_set_at_unix_ns = 0;  // the state-file entry last applied
};

inline LockedClocks locked_clocks_of(const StateEntry& entry) {
  return {entry.locked_min_mhz, entry.locked_max_mhz};
}

// Whether nvmlDeviceSetGpuLockedClocks accepts this lock: idle_sm_mhz <= min <= max <= max_sm_mhz.
inline bool locked_clocks_valid(const ClockSpec& clocks, LockedClocks lock) {
  return lock.min_mhz >= clocks.idle_sm_mhz && lock.min_mhz <= lock.max_mhz &&
         lock.max_mhz <= clocks.max_sm_mhz;
}

// What a handle names: one of the scenario's GPUs, or one of that GPU's MIG devices.
struct HandleTarget {
  SimDevice* device = nullptr;  // the GPU, or the MIG device's parent; null for unknown handles
  bool mig = false;
};

// What a call knows besides its arguments.
struct CallContext {
  std::int64_t realtime_ns = 0;
  std::int64_t scenario_ns = 0;
  std::uint32_t latency_us = 0;  // the scenario's latency_ms fault, slept outside the lock
  // What the call costs by the scenario's driver_costs (sim/costs.hpp), spent outside the lock;
  // mutable: nvmlDeviceGetFieldValues learns it from the fields it was asked for.
  mutable std::int64_t cost_ns = 0;
  std::optional<unsigned> gpu;         // the GPU the call is about, for the costs' waits
  const DriverCosts* costs = nullptr;  // the loaded scenario's (it outlives the call)
};

class Driver {
 public:
  explicit Driver(const Clock& clock);
  ~Driver();
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  // nvmlInit: loads the scenario when the count goes from 0 to 1.
  nvmlReturn_t init(const tl::expected<DriverOptions, std::string>& options);
  // nvmlShutdown: drops the devices when the count returns to 0.
  nvmlReturn_t shutdown();

  // Runs fn(const Scenario&) for a call that takes no device, after the init and fault checks.
  template <class Fn>
  nvmlReturn_t system_call(Entry entry, Fn&& fn);

  // Runs fn(SimDevice&, const CallContext&) after the checks every device call makes: init,
  // handle (a MIG device's handle gives NOT_SUPPORTED), lost GPU, NOT_SUPPORTED faults; the model
  // is advanced to now first. Injected latency is slept after the lock is released.
  template <class Fn>
  nvmlReturn_t device_call(Entry entry, nvmlDevice_t handle, Fn&& fn);

  // As device_call, but a MIG device's handle is answered for its parent GPU: runs
  // fn(SimDevice& parent, const CallContext&, bool mig). For the health counters, which a MIG
  // device reports as its GPU does (docs/scenarios.md, "Health faults").
  template <class Fn>
  nvmlReturn_t gpu_or_mig_call(Entry entry, nvmlDevice_t handle, Fn&& fn);

  nvmlReturn_t device_count(Entry entry, unsigned int* count);
  nvmlReturn_t handle_by_index(Entry entry, unsigned int index, nvmlDevice_t* device);
  // A GPU's handle, or a MIG device's for a "MIG-..." UUID the scenario lists.
  nvmlReturn_t handle_by_uuid(const char* uuid, nvmlDevice_t* device);
  // nvmlDeviceIsMigDeviceHandle: 1 for a MIG device's handle, 0 for a GPU's.
  nvmlReturn_t is_mig_handle(nvmlDevice_t handle, unsigned int* is_mig);
  // nvmlDeviceGetDeviceHandleFromMigDeviceHandle: the parent GPU's handle; INVALID_ARGUMENT for a
  // GPU's own handle, GPU_IS_LOST once the parent is lost.
  nvmlReturn_t parent_of_mig(nvmlDevice_t mig_handle, nvmlDevice_t* parent);
  nvmlReturn_t set_power_limit(nvmlDevice_t handle, unsigned int milliwatts);
  // nvmlDeviceSetGpuLockedClocks (lock) and nvmlDeviceResetGpuLockedClocks (LockedClocks{}).
  nvmlReturn_t set_locked_clocks(Entry entry, nvmlDevice_t handle, LockedClocks lock);

  nvmlReturn_t gpm_sample_alloc(nvmlGpmSample_t* sample);
  nvmlReturn_t gpm_sample_free(nvmlGpmSample_t sample);
  nvmlReturn_t gpm_sample_get(nvmlDevice_t handle, nvmlGpmSample_t sample);
  // nvmlGpmMigSampleGet: the parent GPU's handle and the instance's GPU instance id.
  nvmlReturn_t gpm_mig_sample_get(nvmlDevice_t handle, unsigned int gpu_instance_id,
                                  nvmlGpmSample_t sample);
  // nvmlDeviceGetMigDeviceHandleByIndex.
  nvmlReturn_t mig_handle_by_index(nvmlDevice_t handle, unsigned int index, nvmlDevice_t* out);

  // Runs fn(SimDevice& gpu, MigInstance* instance, const CallContext&) for a call that answers
  // for a GPU (instance null) and for a "mig" instance's handle (advanced to now). A
  // "mig_devices" handle gives NOT_SUPPORTED; an instance that does not exist now (destroyed,
  // or not yet created) INVALID_ARGUMENT.
  template <class Fn>
  nvmlReturn_t instance_call(Entry entry, nvmlDevice_t handle, Fn&& fn);
  nvmlReturn_t gpm_metrics_get(nvmlGpmMetricsGet_t* request);

  // Event sets (sim/driver_events.cpp). A wait delivers one queued event at once, or returns
  // TIMEOUT after sleeping at most timeout_ms (at once for 0); GPU_IS_LOST once a registered GPU
  // is lost.
  nvmlReturn_t event_set_create(nvmlEventSet_t* set);
  nvmlReturn_t register_events(nvmlDevice_t handle, unsigned long long types, nvmlEventSet_t set);
  nvmlReturn_t event_set_wait(nvmlEventSet_t set, nvmlEventData_t* data, unsigned int timeout_ms);
  nvmlReturn_t event_set_free(nvmlEventSet_t set);

  // For the simulated DCGM (sim/dcgm_sim.cpp), which drives the same models: the scenario loaded
  // (nullptr before init; it stays put until the last shutdown), and GPU `gpu` advanced to now.
  // UNINITIALIZED before init, INVALID_ARGUMENT past the last GPU, GPU_IS_LOST once it is lost;
  // NVML's faults do not apply (DCGM has its own).
  const Scenario* loaded_scenario() const;
  // What a simulated DCGM call costs by the loaded scenario's driver_costs (none before init).
  CallCost dcgm_call_cost(std::string_view symbol) const;
  struct Observation {
    std::int64_t realtime_ns = 0;
    std::int64_t scenario_ns = 0;
    Levels integral{};  // GpuModel::activity_integral() at scenario_ns
    Levels levels{};    // the current bucket's levels
    double memory_used_mib = 0;
  };
  nvmlReturn_t observe(std::size_t gpu, Observation& out);
  // The same for the GPU instances of GPU `gpu` that exist now, in the order of the scenario's
  // "mig" instances (none with MIG off), each advanced to now: integral and levels are the
  // instance's own, memory_used_mib its own.
  struct InstanceObservation {
    const MigProfile* profile = nullptr;
    unsigned gpu_instance_id = 0;
    unsigned compute_instance_id = 0;
    Observation observation;
  };
  nvmlReturn_t observe_instances(std::size_t gpu, std::vector<InstanceObservation>& out);

  // Whether the caller counts as root (the scenario's privileged, GPUSCOPE_SIM_PRIVILEGED); read
  // inside a call, under the lock.
  bool privileged() const { return privileged_; }

  // The reason for the last failure, copied for the calling thread.
  const char* last_error() const;
  // The last scenario loaded ("" before any).
  const char* scenario_name() const;

 private:
  bool initialized() const { return scenario_.has_value(); }
  nvmlReturn_t load(const DriverOptions& options);
  void note_error(std::string_view message);
  nvmlReturn_t fail(nvmlReturn_t code, std::string_view message);
  nvmlReturn_t fail_call(nvmlReturn_t code, Entry entry, const char* what, std::size_t gpu);
  std::int64_t to_scenario_ns(std::int64_t realtime_ns) const;
  nvmlReturn_t begin_system_call(Entry entry, CallContext& context);
  nvmlReturn_t begin_handle_call(Entry entry, nvmlDevice_t handle, CallContext& context,
                                 HandleTarget& target);
  // mig null: a MIG device's handle is NOT_SUPPORTED; else it is accepted and *mig says so.
  nvmlReturn_t begin_device_call(Entry entry, nvmlDevice_t handle, CallContext& context,
                                 SimDevice*& device, bool* mig = nullptr);
  // NOT_SUPPORTED if the GPU's faults withhold entry, else SUCCESS.
  nvmlReturn_t check_not_supported(Entry entry, const SimDevice& device);
  // Runs fn(HandleTarget, const CallContext&) for a call that accepts GPU and MIG handles alike,
  // after the init, handle and NOT_SUPPORTED-fault checks (the parent GPU's faults).
  template <class Fn>
  nvmlReturn_t handle_call(Entry entry, nvmlDevice_t handle, Fn&& fn);
  HandleTarget find_handle(nvmlDevice_t handle) const;
  bool is_live_sample(nvmlGpmSample_t sample) const;
  bool is_live_event_set(const nvmlEventSet_st* set) const;
  // Queues the events of set's registered GPUs that fell due by context's time, then takes the
  // first: SUCCESS, else GPU_IS_LOST once a registered GPU is lost, else TIMEOUT with
  // *next_due_ns the scenario time of the next event or loss (INT64_MAX: none). Lock held.
  nvmlReturn_t take_event(nvmlEventSet_st& set, const CallContext& context, nvmlEventData_t& out,
                          std::int64_t* next_due_ns);
  void queue_due_events(nvmlEventSet_st& set, std::int64_t now_ns);
  std::int64_t next_due_ns(const nvmlEventSet_st& set, std::int64_t now_ns) const;
  void poll_state_file();
  static const StateEntry* usable_entry(const StateMap& entries, const GpuConfig& config);
  void apply_state(const StateMap& entries);
  // After the call, outside the lock: the injected latency, then the call's cost.
  void pause(const CallContext& context) const;
  std::array<std::int64_t, kEntryCount> entry_cost_ns_{};  // by the scenario's driver_costs

  const Clock& clock_;
  mutable std::mutex mutex_;
  int init_count_ = 0;
  std::uint64_t generation_ = 0;
  std::optional<Scenario> scenario_;
  std::vector<std::unique_ptr<SimDevice>> devices_;
  std::optional<StateFile> state_;
  std::int64_t last_state_poll_ns_ = 0;
  std::optional<std::int64_t> first_init_realtime_ns_;
  std::int64_t epoch_ns_ = 0;
  double time_scale_ = 1.0;
  bool privileged_ = true;
  std::vector<nvmlGpmSample_t> samples_;
  std::vector<nvmlEventSet_st*> event_sets_;
  char last_error_[2048] = {};
  char scenario_name_[128] = {};
};

template <class Fn>
nvmlReturn_t Driver::system_call(Entry entry, Fn&& fn) {
  CallContext context;
  nvmlReturn_t result;
  {
    std::lock_guard lock(mutex_);
    result = begin_system_call(entry, context);
    if (result == nvml::kSuccess) result = fn(*scenario_);
  }
  pause(context);
  return result;
}

template <class Fn>
nvmlReturn_t Driver::gpu_or_mig_call(Entry entry, nvmlDevice_t handle, Fn&& fn) {
  CallContext context;
  nvmlReturn_t result;
  {
    std::lock_guard lock(mutex_);
    SimDevice* device = nullptr;
    bool mig = false;
    result = begin_device_call(entry, handle, context, device, &mig);
    if (result == nvml::kSuccess) result = fn(*device, context, mig);
  }
  pause(context);
  return result;
}

template <class Fn>
nvmlReturn_t Driver::instance_call(Entry entry, nvmlDevice_t handle, Fn&& fn) {
  CallContext context;
  nvmlReturn_t result;
  {
    std::lock_guard lock(mutex_);
    SimDevice* device = nullptr;
    bool mig = false;
    result = begin_device_call(entry, handle, context, device, &mig);
    MigInstance* instance = nullptr;
    if (result == nvml::kSuccess && mig) {
      instance = device->instance_of(handle);
      if (instance == nullptr) {
        result = fail_call(nvml::kErrorNotSupported, entry,
                           "not supported on this MIG device handle (a \"mig_devices\" UUID: no "
                           "instance behind it)",
                           device->handle.index);
      } else if (!instance->live_at(context.scenario_ns)) {
        result =
            fail_call(nvml::kErrorInvalidArgument, entry,
                      "the MIG device's GPU instance does not exist now", device->handle.index);
      } else {
        instance->advance_to(context.scenario_ns);
      }
    }
    if (result == nvml::kSuccess) result = fn(*device, instance, context);
  }
  pause(context);
  return result;
}

template <class Fn>
nvmlReturn_t Driver::device_call(Entry entry, nvmlDevice_t handle, Fn&& fn) {
  CallContext context;
  nvmlReturn_t result;
  {
    std::lock_guard lock(mutex_);
    SimDevice* device = nullptr;
    result = begin_device_call(entry, handle, context, device);
    if (result == nvml::kSuccess) result = fn(*device, context);
  }
  pause(context);
  return result;
}

// Whether nvmlDeviceGetRemappedRows answers for this GPU (mig: asked through a MIG device), and
// whether nvmlDeviceGetRetiredPages does (sim/api_health.cpp); the fields follow them.
bool remapped_rows_supported(const SimDevice& device, bool mig);
bool retired_pages_supported(const GpuSpec& spec);

// The event types a GPU of this spec reports (nvmlDeviceGetSupportedEventTypes): all of them, less
// the ECC ones without ECC memory.
unsigned long long supported_event_types(const GpuSpec& spec);

// The driver behind the exported functions: the process-wide one, or the one a test installed.
Driver& process_driver();

// Makes the exported functions use driver (nullptr: the process-wide one again). For tests that
// drive the NVML API on a manual clock.
void set_process_driver_for_testing(Driver* driver);

}  // namespace gpuscope::sim
