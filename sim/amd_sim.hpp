// The simulated AMD GPUs behind libgpuscope-sim-amdsmi.so and libgpuscope-sim-rocmsmi.so: the
// scenario's "amd_gpus" run on the same GPU model as the simulated NVML's GPUs (sim/gpu_model),
// on the same timeline (GPUSCOPE_SIM_SCENARIO, GPUSCOPE_SIM_EPOCH_NS, the time scale). Each
// library has its own AmdSim; the exports are thin wrappers that convert units and structs.
//
// Modelled: init (the scenario's "amd" faults, a library absent), the devices in order (an
// MI250X card's GCDs one after the other), identity, VRAM, power cap and range (set: in this
// process only, refused without privileges), average power, the energy accumulator in 15.3 µJ
// counts with the driver's time stamp, wrapping at 2^energy_counter_bits, activity, temperatures,
// clocks, the GPU metrics table and the process list.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "sim/clock.hpp"
#include "sim/gpu_model.hpp"
#include "sim/options.hpp"
#include "sim/scenario.hpp"
#include "sim/state_file.hpp"

namespace gpuscope::sim {

// How long a scenario's GPU reset ("reset_at_s") lasts: every reading fails meanwhile.
inline constexpr double kAmdResetS = 0.5;

// What AmdSim says about a call, mapped to each library's status by its exports.
enum class AmdResult {
  Ok,
  Invalid,
  NotInit,
  NoPerm,
  DriverNotLoaded,
  InitError,
  Load,
  OutOfBounds,
  NotFound,
  Unknown
};

// One device's readings at one time, in the units of the metrics table.
struct AmdReading {
  unsigned gfx_activity = 0;  // percent
  unsigned umc_activity = 0;
  unsigned average_power_w = 0;
  std::uint64_t average_power_uw = 0;
  std::uint64_t energy_count = 0;  // 15.3 µJ counts, wrapped
  std::uint64_t timestamp_ns = 0;
  double temperature_c = 0;  // hotspot (junction)
  double edge_c = 0;
  double memory_c = 0;
  unsigned gfx_clock_mhz = 0;
  std::uint64_t memory_used_bytes = 0;
  std::uint64_t xgmi_read_kb = 0;   // per link
  std::uint64_t xgmi_write_kb = 0;  // per link
  std::uint64_t gfx_busy_ns = 0;    // graphics engine time since the scenario began
  bool power_capped = false;
};

class AmdSim {
 public:
  // rocm_smi: this is the ROCm SMI library (else AMD SMI), for the "amd" object's switches.
  AmdSim(const Clock& clock, bool rocm_smi);

  AmdResult init(const tl::expected<DriverOptions, std::string>& options);
  AmdResult shutdown();
  // The number of devices, after init.
  AmdResult count(std::uint32_t& count);
  // The scenario's configuration of device `index` (nullptr: no such device or not initialised).
  const AmdGpuConfig* config(std::uint32_t index);
  // The readings of device `index` now.
  AmdResult read(std::uint32_t index, AmdReading& reading);
  AmdResult power_cap_uw(std::uint32_t index, std::uint64_t& microwatts);
  AmdResult set_power_cap_uw(std::uint32_t index, std::uint64_t microwatts);
  // The card indices of the devices, in order (AMD SMI's sockets).
  std::vector<unsigned> cards();

  const char* last_error() const;
  // What a call costs by the scenario's driver_costs (sim/costs.hpp; none before init).
  CallCost call_cost_of(std::string_view symbol) const;

 private:
  AmdResult fail(AmdResult result, std::string message);
  std::int64_t scenario_ns(std::int64_t realtime_ns) const;
  GpuModel* advanced(std::uint32_t index);
  // Whether device `index` is inside its reset now; records the accumulator's zero after it.
  bool resetting(std::uint32_t index, const GpuModel& model);
  // The power caps an earlier process set (the state file the simulated NVML keeps too, by UUID).
  AmdResult apply_state_file(const DriverOptions& options);

  const Clock& clock_;
  bool rocm_smi_;
  mutable std::mutex mutex_;
  int init_count_ = 0;
  std::optional<Scenario> scenario_;
  std::vector<std::unique_ptr<GpuModel>> models_;
  // Per device: the model's energy (mJ) when its reset ended, the accumulator's new zero.
  std::vector<std::optional<unsigned long long>> reset_energy_mj_;
  // Per device: the model's energy (mJ) at init, where energy_counter_start_j counts from.
  std::vector<unsigned long long> init_energy_mj_;
  std::int64_t epoch_ns_ = 0;
  double time_scale_ = 1.0;
  bool privileged_ = true;
  std::optional<StateFile> state_;
  std::string last_error_;
};

// The process's AmdSim of the library this is linked into.
AmdSim& process_amd_sim();

}  // namespace gpuscope::sim
