#include "sim/driver.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "sim/scenario_parser.hpp"

namespace gpuscope::sim {
namespace {

// How often device calls look at the state file for limits set by other processes.
constexpr std::int64_t kStatePollNs = 50'000'000;

// The longest scenario timeline the driver accepts at nvmlInit.
constexpr std::int64_t kMaxTimelineNs = 7LL * 86400 * 1'000'000'000;

}  // namespace

Driver::Driver(const Clock& clock) : clock_(clock) {}

Driver::~Driver() {
  for (nvmlGpmSample_t sample : samples_) delete sample;
  for (nvmlEventSet_st* set : event_sets_) delete set;
}

nvmlReturn_t Driver::init(const tl::expected<DriverOptions, std::string>& options) {
  std::lock_guard lock(mutex_);
  if (init_count_ > 0) {
    ++init_count_;
    return nvml::kSuccess;
  }
  if (!options) return fail(nvml::kErrorDriverNotLoaded, options.error());
  const nvmlReturn_t result = load(*options);
  if (result == nvml::kSuccess) init_count_ = 1;
  return result;
}

nvmlReturn_t Driver::shutdown() {
  std::lock_guard lock(mutex_);
  if (init_count_ == 0) return fail(nvml::kErrorUninitialized, "nvmlShutdown without nvmlInit");
  if (--init_count_ == 0) {
    devices_.clear();
    scenario_.reset();
    state_.reset();
  }
  return nvml::kSuccess;
}

nvmlReturn_t Driver::load(const DriverOptions& options) {
  if (!options.scenario_path) {
    return fail(nvml::kErrorDriverNotLoaded,
                "GPUSCOPE_SIM_SCENARIO is not set; it must name a scenario JSON file");
  }
  // A scenario that is not there is a missing driver; one that is there but wrong is a fault.
  // access(), not an open: opening a FIFO would block until a writer came.
  if (::access(options.scenario_path->c_str(), R_OK) != 0) {
    return fail(nvml::kErrorDriverNotLoaded, "scenario " + *options.scenario_path +
                                                 ": cannot open the file (GPUSCOPE_SIM_SCENARIO)");
  }
  tl::expected<Scenario, std::string> scenario = load_scenario(*options.scenario_path);
  if (!scenario) return fail(nvml::kErrorUnknown, scenario.error());
  std::snprintf(scenario_name_, sizeof scenario_name_, "%s", scenario->name.c_str());
  if (scenario->init_error) {
    return fail(*scenario->init_error, "scenario " + scenario->path +
                                           ": nvmlInit fails by the scenario's faults.init_error");
  }
  const std::int64_t now = clock_.realtime_ns();
  if (!first_init_realtime_ns_) first_init_realtime_ns_ = now;
  epoch_ns_ = options.epoch_ns.value_or(*first_init_realtime_ns_);
  time_scale_ = options.time_scale.value_or(scenario->time_scale);
  privileged_ = options.privileged.value_or(scenario->privileged);
  // The model walks every 100 ms bucket since time zero; an epoch years ago (a unit mistake in
  // GPUSCOPE_SIM_EPOCH_NS) would make the first call take hours instead of failing clearly.
  if (to_scenario_ns(now) > kMaxTimelineNs) {
    return fail(nvml::kErrorUnknown,
                "GPUSCOPE_SIM_EPOCH_NS=" + std::to_string(epoch_ns_) + " puts scenario time zero " +
                    std::to_string(to_scenario_ns(now) / 1'000'000'000) +
                    " scenario seconds ago; the simulated timeline is limited to 7 days");
  }

  StateFile state(options.state_path.value_or(
      scenario->state_file.value_or(default_state_path(scenario->name))));
  state.changed();  // remember the file as it is before reading it, so no later change is missed
  const tl::expected<StateMap, std::string> entries = state.read();
  if (!entries) return fail(nvml::kErrorUnknown, entries.error());

  if (options.driver_costs) scenario->driver_costs = *driver_costs_named(*options.driver_costs);
  scenario_ = std::move(*scenario);
  for (std::size_t i = 0; i < kEntryCount; ++i) {
    entry_cost_ns_[i] =
        scenario_->driver_costs.of_call(entry_symbols(static_cast<Entry>(i)).front());
  }
  ++generation_;
  devices_.clear();
  for (std::size_t i = 0; i < scenario_->gpus.size(); ++i) {
    const GpuConfig& gpu = scenario_->gpus[i];
    const StateEntry* entry = usable_entry(*entries, gpu);
    // A limit set before this timeline began has held since scenario time zero.
    const bool from_start = entry != nullptr && to_scenario_ns(entry->set_at_unix_ns) == 0;
    auto device = std::make_unique<SimDevice>(
        gpu, scenario_->seed, i, from_start ? entry->power_limit_mw : 0U,
        from_start ? locked_clocks_of(*entry) : LockedClocks{});
    if (entry != nullptr) {
      device->limit_set_at_unix_ns = entry->set_at_unix_ns;
      if (!from_start) {
        const std::int64_t at = to_scenario_ns(entry->set_at_unix_ns);
        device->model.set_power_limit(entry->power_limit_mw, at);
        device->model.set_locked_clocks(locked_clocks_of(*entry), at);
      }
    }
    if (gpu.faults.lost_at_s) device->lost_at_ns = std::llround(*gpu.faults.lost_at_s * 1e9);
    device->model.set_time_scale(time_scale_);
    devices_.push_back(std::move(device));
  }
  state_ = std::move(state);
  last_state_poll_ns_ = clock_.monotonic_ns();
  return nvml::kSuccess;
}

const StateEntry* Driver::usable_entry(const StateMap& entries, const GpuConfig& config) {
  const auto found = entries.find(config.uuid);
  if (found == entries.end()) return nullptr;
  const StateEntry& entry = found->second;
  const PowerSpec& power = config.spec.power;
  // A limit outside this scenario's range was set under another configuration of the same
  // UUID; the driver would have rejected it, so it does not apply here.
  if (entry.power_limit_mw < power.min_w * 1000 || entry.power_limit_mw > power.max_w * 1000) {
    return nullptr;
  }
  const LockedClocks lock = locked_clocks_of(entry);
  if (lock.locked() && !locked_clocks_valid(config.spec.clocks, lock)) return nullptr;
  return &entry;
}

void Driver::apply_state(const StateMap& entries) {
  for (const auto& device : devices_) {
    const StateEntry* entry = usable_entry(entries, device->model.config());
    if (entry == nullptr || entry->set_at_unix_ns == device->limit_set_at_unix_ns) continue;
    device->limit_set_at_unix_ns = entry->set_at_unix_ns;
    const std::int64_t at = to_scenario_ns(entry->set_at_unix_ns);
    device->model.set_power_limit(entry->power_limit_mw, at);
    device->model.set_locked_clocks(locked_clocks_of(*entry), at);
  }
}

void Driver::poll_state_file() {
  const std::int64_t now = clock_.monotonic_ns();
  if (now - last_state_poll_ns_ < kStatePollNs) return;
  last_state_poll_ns_ = now;
  if (!state_->changed()) return;
  const tl::expected<StateMap, std::string> entries = state_->read();
  if (!entries) {
    note_error(entries.error());
    return;
  }
  apply_state(*entries);
}

std::int64_t Driver::to_scenario_ns(std::int64_t realtime_ns) const {
  if (realtime_ns <= epoch_ns_) return 0;
  return std::llround(static_cast<double>(realtime_ns - epoch_ns_) * time_scale_);
}

void Driver::note_error(std::string_view message) {
  std::snprintf(last_error_, sizeof last_error_, "%.*s", static_cast<int>(message.size()),
                message.data());
}

nvmlReturn_t Driver::fail(nvmlReturn_t code, std::string_view message) {
  note_error(message);
  return code;
}

nvmlReturn_t Driver::fail_call(nvmlReturn_t code, Entry entry, const char* what, std::size_t gpu) {
  const std::string_view symbol = entry_symbols(entry).front();
  std::snprintf(last_error_, sizeof last_error_, "%.*s on GPU %zu: %s",
                static_cast<int>(symbol.size()), symbol.data(), gpu, what);
  return code;
}

nvmlReturn_t Driver::begin_system_call(Entry entry, CallContext& context) {
  if (!initialized()) return nvml::kErrorUninitialized;
  const FaultSpec& faults = scenario_->global_faults;
  context.latency_us = faults.latency_us[static_cast<std::size_t>(entry)];
  context.cost_ns = entry_cost_ns_[static_cast<std::size_t>(entry)];
  context.costs = &scenario_->driver_costs;
  if (faults.not_supported.test(static_cast<std::size_t>(entry))) {
    return fail(nvml::kErrorNotSupported, "not supported by the scenario's faults.not_supported");
  }
  return nvml::kSuccess;
}

HandleTarget Driver::find_handle(nvmlDevice_t handle) const {
  // Compare addresses only: a stale or foreign handle must never be dereferenced.
  for (const auto& device : devices_) {
    if (&device->handle == handle) return {device.get(), false};
    for (const nvmlDevice_st& mig : device->mig_handles) {
      if (&mig == handle) return {device.get(), true};
    }
  }
  return {};
}

nvmlReturn_t Driver::begin_handle_call(Entry entry, nvmlDevice_t handle, CallContext& context,
                                       HandleTarget& target) {
  if (!initialized()) return nvml::kErrorUninitialized;
  target = find_handle(handle);
  if (target.device == nullptr) return nvml::kErrorInvalidArgument;
  context.latency_us =
      target.device->model.config().faults.latency_us[static_cast<std::size_t>(entry)];
  context.cost_ns = entry_cost_ns_[static_cast<std::size_t>(entry)];
  context.costs = &scenario_->driver_costs;
  context.gpu = static_cast<unsigned>(target.device->handle.index);
  context.realtime_ns = clock_.realtime_ns();
  context.scenario_ns = to_scenario_ns(context.realtime_ns);
  return nvml::kSuccess;
}

nvmlReturn_t Driver::check_not_supported(Entry entry, const SimDevice& device) {
  if (!device.model.config().faults.not_supported.test(static_cast<std::size_t>(entry))) {
    return nvml::kSuccess;
  }
  return fail_call(nvml::kErrorNotSupported, entry, "not supported (scenario fault)",
                   device.handle.index);
}

nvmlReturn_t Driver::begin_device_call(Entry entry, nvmlDevice_t handle, CallContext& context,
                                       SimDevice*& device, bool* mig) {
  HandleTarget target;
  if (const nvmlReturn_t result = begin_handle_call(entry, handle, context, target);
      result != nvml::kSuccess) {
    return result;
  }
  device = target.device;
  const std::size_t gpu = device->handle.index;
  if (mig != nullptr) *mig = target.mig;
  // The model knows whole GPUs only: nothing it could report belongs to a MIG device.
  if (target.mig && mig == nullptr) {
    return fail_call(nvml::kErrorNotSupported, entry,
                     "not supported on a MIG device handle (the simulator models whole GPUs; "
                     "nvmlDeviceGetDeviceHandleFromMigDeviceHandle gives the GPU)",
                     gpu);
  }
  if (context.scenario_ns >= device->lost_at_ns) {
    return fail_call(nvml::kErrorGpuIsLost, entry, "the GPU has fallen off the bus", gpu);
  }
  if (const nvmlReturn_t result = check_not_supported(entry, *device); result != nvml::kSuccess) {
    return result;
  }
  poll_state_file();
  device->model.advance_to(context.scenario_ns);
  return nvml::kSuccess;
}

CallCost Driver::dcgm_call_cost(std::string_view symbol) const {
  std::lock_guard lock(mutex_);
  if (!scenario_ || scenario_->driver_costs.call_ns.empty()) return {};
  return call_cost(scenario_->driver_costs, symbol);
}

const Scenario* Driver::loaded_scenario() const {
  std::lock_guard lock(mutex_);
  return scenario_ ? &*scenario_ : nullptr;
}

nvmlReturn_t Driver::observe(std::size_t gpu, Observation& out) {
  std::lock_guard lock(mutex_);
  if (!initialized()) return nvml::kErrorUninitialized;
  if (gpu >= devices_.size()) return nvml::kErrorInvalidArgument;
  SimDevice& device = *devices_[gpu];
  out.realtime_ns = clock_.realtime_ns();
  out.scenario_ns = to_scenario_ns(out.realtime_ns);
  if (out.scenario_ns >= device.lost_at_ns) return nvml::kErrorGpuIsLost;
  poll_state_file();
  device.model.advance_to(out.scenario_ns);
  out.integral = device.model.activity_integral();
  out.levels = device.model.bucket().levels;
  out.memory_used_mib = device.model.bucket().memory_used_mib;
  return nvml::kSuccess;
}

nvmlReturn_t Driver::observe_instances(std::size_t gpu, std::vector<InstanceObservation>& out) {
  out.clear();
  Observation now;
  if (const nvmlReturn_t result = observe(gpu, now); result != nvml::kSuccess) return result;
  std::lock_guard lock(mutex_);
  for (MigInstance& instance : devices_[gpu]->instances) {
    if (!instance.live_at(now.scenario_ns)) continue;
    instance.advance_to(now.scenario_ns);
    InstanceObservation seen{&instance.profile(), instance.spec().gpu_instance_id,
                             instance.spec().compute_instance_id, now};
    seen.observation.integral = instance.activity_integral();
    seen.observation.levels = instance.levels();
    seen.observation.memory_used_mib = instance.memory_used_mib();
    out.push_back(seen);
  }
  return nvml::kSuccess;
}

void Driver::pause(const CallContext& context) const {
  if (context.latency_us > 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(context.latency_us));
  }
  // The scenario stays loaded until the last shutdown, so its costs outlive the call.
  if (context.cost_ns > 0 && context.costs != nullptr) {
    spend_call_cost(context.costs->waits, context.cost_ns, context.gpu);
  }
}

const char* Driver::last_error() const {
  // A per-thread copy, so the text cannot change under the caller while it reads it.
  thread_local char copy[sizeof last_error_];
  std::lock_guard lock(mutex_);
  std::memcpy(copy, last_error_, sizeof copy);
  return copy;
}

const char* Driver::scenario_name() const {
  thread_local char copy[sizeof scenario_name_];
  std::lock_guard lock(mutex_);
  std::memcpy(copy, scenario_name_, sizeof copy);
  return copy;
}

namespace {
std::atomic<Driver*> test_driver{nullptr};
}  // namespace

Driver& process_driver() {
  if (Driver* driver = test_driver.load(std::memory_order_acquire)) return *driver;
  // Never destroyed: other threads may still call in while the process exits.
  static Driver* const driver = new Driver(system_clock());
  return *driver;
}

void set_process_driver_for_testing(Driver* driver) {
  test_driver.store(driver, std::memory_order_release);
}

}  // namespace gpuscope::sim
