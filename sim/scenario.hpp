// A parsed, validated scenario: plain data, no JSON. docs/scenarios.md describes every field.
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "nvml/abi.hpp"
#include "sim/costs.hpp"
#include "sim/entries.hpp"
#include "sim/gpu_spec.hpp"
#include "sim/levels.hpp"

namespace gpuscope::sim {

struct Phase {
  std::string name;
  double duration_s = 0;  // work-seconds at full speed
  double ramp_s = 0;      // levels ramp linearly from the previous phase's over this much work
  Levels levels{};        // before activity_scale and noise
  double memory_used_gib = 0;
  std::optional<double> power_w;  // demanded power, instead of the one derived from levels
  double compute_bound = 0.8;     // how much a slower clock slows this phase's work (0..1)
  double noise = 0.03;            // relative standard deviation of each bucket's levels
};

struct ProcessSpec {
  unsigned pid = 0;
  unsigned used_memory_mib = 0;
};

// Health counts and flags: what one step of a GPU's health faults adds, and (sim/health.hpp)
// their sums at a time. Counts add up; flags stay set once a step set them.
struct HealthCounts {
  std::uint64_t ecc_corrected = 0;  // volatile: since the driver loaded (scenario time zero)
  std::uint64_t ecc_uncorrected = 0;
  std::uint32_t remapped_correctable = 0;
  std::uint32_t remapped_uncorrectable = 0;
  bool remap_pending = false;
  bool remap_failure = false;
  std::uint32_t pcie_replays = 0;
  std::uint32_t retired_sbe = 0;
  std::uint32_t retired_dbe = 0;
  bool retired_pending = false;
  std::uint64_t nvlink_replay_errors = 0;
  std::uint64_t nvlink_recovery_errors = 0;
  std::uint64_t nvlink_crc_flit_errors = 0;
  std::uint64_t nvlink_crc_data_errors = 0;

  HealthCounts& operator+=(const HealthCounts& step);
  bool operator==(const HealthCounts&) const = default;
};

// One step of a GPU's health faults ("faults": {"health": [...]}): at at_s (scenario seconds) its
// counts are added to the GPU's counters and its flags set for good; see sim/health.hpp.
struct HealthStep {
  double at_s = 0;
  unsigned xid = 0;  // 0: none; else an Xid event with this number
  HealthCounts counts;
};

// Faults for one GPU (the scenario's global faults already merged in).
struct FaultSpec {
  std::optional<double> lost_at_s;             // from then on, every call returns GPU_IS_LOST
  std::bitset<kEntryCount> not_supported;      // entries that return NOT_SUPPORTED
  std::vector<unsigned> not_supported_fields;  // field ids whose entry is NOT_SUPPORTED
  std::array<std::uint32_t, kEntryCount> latency_us{};  // added to each call
  std::vector<HealthStep> health;  // sorted by at_s (stable: file order within a time)
};

// The lifetime ECC counts the GPU had before the scenario began (aggregate = these + volatile).
struct EccStart {
  std::uint64_t corrected = 0;
  std::uint64_t uncorrected = 0;
};

// One GPU instance of a partitioned GPU ("mig": {"instances": [...]}), with one compute
// instance spanning it: its profile, identity, own load and processes.
struct MigInstanceSpec {
  std::string profile;  // a profile name of the GPU's model, "3g.40gb"
  std::string uuid;     // "MIG-..."
  unsigned gpu_instance_id = 0;
  unsigned compute_instance_id = 0;
  std::vector<Phase> phases;
  std::vector<ProcessSpec> processes;
  double created_at_s = 0;
  std::optional<double> destroyed_at_s;
};

// A GPU in MIG mode: its instances in MIG device index order (none: MIG on, no instances).
struct MigSpec {
  std::vector<MigInstanceSpec> instances;
  std::optional<double> off_at_s;  // scenario time MIG mode turns off, its instances gone
};

struct GpuConfig {
  GpuSpec spec;  // the built-in model with the scenario's overrides applied
  std::string uuid;
  std::string pci_bus_id;  // "00000000:18:00.0"
  unsigned pci_domain = 0;
  unsigned pci_bus = 0;
  unsigned pci_device = 0;
  double activity_scale = 1.0;
  std::vector<Phase> phases;
  FaultSpec faults;
  EccStart ecc_aggregate_start;
  std::vector<ProcessSpec> processes;
  std::vector<std::string> mig_devices;  // UUIDs ("MIG-...") of the GPU's MIG devices
  std::optional<MigSpec> mig;            // MIG mode with instances (never with mig_devices)
};

// Whether the GPU is in MIG mode: the calls NVML refuses on such a GPU say NOT_SUPPORTED.
inline bool mig_enabled(const GpuConfig& gpu) {
  return !gpu.mig_devices.empty() || gpu.mig.has_value();
}

// Whether MIG mode is on at scenario time `scenario_ns`: as mig_enabled, until `off_at_s`.
// Only the MIG calls follow the change; the rest keep their MIG-mode answers (docs/scenarios.md).
inline bool mig_enabled_at(const GpuConfig& gpu, std::int64_t scenario_ns) {
  if (!mig_enabled(gpu)) return false;
  return !gpu.mig || !gpu.mig->off_at_s ||
         static_cast<double>(scenario_ns) < *gpu.mig->off_at_s * 1e9;
}

// Another profiler holding the profiling counters (Nsight Compute, a DCGM paused for it): DCGM's
// profiling fields are blank from from_s to to_s (scenario seconds).
struct CountersTaken {
  double from_s = 0;
  double to_s = 0;
};

// What becomes of DCGM's profiling module (fields 1001-1012).
enum class DcgmProfiling {
  Ok,
  ModuleMissing,  // the module does not load: MODULE_NOT_LOADED
  Unsupported,    // the GPUs have no DCP counters: PROFILING_NOT_SUPPORTED
};

// The DCGM installed beside the driver: the scenario's "dcgm" object (docs/scenarios.md). A
// scenario without one has no DCGM: dcgmInit of the simulated libdcgm fails.
struct DcgmSpec {
  std::optional<std::string> hostengine;  // the address an nv-hostengine listens on; none: none
  bool embedded = true;                   // dcgmStartEmbedded_v2 succeeds
  DcgmProfiling profiling = DcgmProfiling::Ok;
  bool multipass = false;            // refuse watches that need several passes (no multiplexing)
  bool refuse_field_groups = false;  // dcgmFieldGroupCreate answers MAX_LIMIT
  std::vector<CountersTaken> counters_taken;
  // dcgmProfGetSupportedMetricGroups answers this many calls of each connection, then fails
  // (the host engine went away between two calls); none: every call answers.
  std::optional<std::uint64_t> metric_groups_answers;
};

// One AMD GPU device as AMD SMI and ROCm SMI list it: a whole MI300X, or one GCD of an MI250X
// card (the libraries list each of a card's two GCDs as a device). `gpu` holds what the shared
// GPU model needs (docs/scenarios.md, "amd_gpus").
struct AmdGpuConfig {
  GpuConfig gpu;
  AmdSpec amd;
  unsigned card = 0;  // the card (OAM module) it is on: its socket in AMD SMI
  unsigned gcd = 0;   // its GCD on the card (0 for a single-die GPU)
  std::uint64_t unique_id = 0;
  // A GPU reset at this scenario time: every reading fails (not found) for kAmdResetS
  // (sim/amd_sim.hpp), then the energy accumulator restarts from zero.
  std::optional<double> reset_at_s;
  // The accumulator's value when the simulated library initialises, J (nullopt: the model's
  // energy since its uptime began); a 32-bit one set just below 65.7 kJ wraps soon.
  std::optional<double> energy_counter_start_j;
};

// How the simulated AMD libraries behave: the scenario's "amd" object.
enum class AmdInitError { None, Permission, DriverNotLoaded, InitError };
struct AmdLibrariesSpec {
  bool amd_smi = true;  // false: the simulated AMD SMI fails amdsmi_init, as a missing one
  bool rocm_smi = true;
  AmdInitError init_error = AmdInitError::None;  // both libraries' init fails so
};

struct Scenario {
  std::string path;  // the file it was read from
  std::string name;
  std::string description;
  std::uint64_t seed = 0;
  double time_scale = 1.0;  // scenario seconds per wall second
  std::string driver_version = "550.54.15";
  std::string nvml_version = "12.550.54.15";
  int cuda_driver_version = 12040;
  bool privileged = true;
  std::optional<std::string> state_file;   // resolved against the scenario's folder
  std::optional<nvmlReturn_t> init_error;  // nvmlInit fails with this code
  FaultSpec global_faults;                 // also applies to calls that take no device
  std::vector<GpuConfig> gpus;             // NVIDIA GPUs, NVML's
  std::optional<DcgmSpec> dcgm;
  std::vector<AmdGpuConfig> amd_gpus;  // AMD GPU devices, in the libraries' order
  AmdLibrariesSpec amd;
  DriverCosts driver_costs;  // what each call costs (sim/costs.hpp); none by default
};

}  // namespace gpuscope::sim
