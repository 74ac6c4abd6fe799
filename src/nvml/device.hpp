// Typed access to one GPU through a loaded NVML library. Every getter returns Expected<T>: a
// value, or the Failure the driver reported (NOT_SUPPORTED, GPU_IS_LOST, ...). Nothing here
// allocates on the success path of the per-sample getters, so the sampler can call them freely.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nvml/library.hpp"

namespace gpuscope::nvml {

struct PciInfo {
  std::string bus_id;  // "00000000:18:00.0"
  unsigned domain = 0, bus = 0, device = 0;
  unsigned pci_device_id = 0, pci_subsystem_id = 0;
};

struct MemoryInfo {
  std::uint64_t total_bytes = 0, free_bytes = 0, used_bytes = 0;
  std::uint64_t reserved_bytes = 0;  // 0 when only the v1 call is available
};

struct PowerConstraints {
  unsigned min_mw = 0, max_mw = 0;
};

struct Utilization {
  unsigned gpu_percent = 0, memory_percent = 0;
};

struct ComputeCapability {
  int major = 0, minor = 0;
};

struct ProcessInfo {
  unsigned pid = 0;
  std::optional<std::uint64_t> used_memory_bytes;  // absent: the driver would not say
  // The MIG GPU and compute instance the process runs in; absent when MIG is off.
  std::optional<unsigned> gpu_instance_id;
  std::optional<unsigned> compute_instance_id;
};

// nvmlDeviceGetMigMode: MIG mode now and after the next GPU reset.
struct MigMode {
  bool current = false, pending = false;
};

// nvmlDeviceGetAttributes_v2 on a MIG device: the resources of its GPU instance and compute
// instance (slice counts are in compute slices: 1 to 7 on A100 and H100).
struct MigAttributes {
  unsigned multiprocessor_count = 0;
  unsigned copy_engine_count = 0, decoder_count = 0, encoder_count = 0;
  unsigned jpeg_count = 0, ofa_count = 0;
  unsigned gpu_instance_slice_count = 0;
  unsigned compute_instance_slice_count = 0;
  std::uint64_t memory_mib = 0;  // memorySizeMB, which NVML counts in MiB
};

// One process's utilization over the driver's last sample period, percent.
struct ProcessUtilization {
  unsigned pid = 0;
  std::uint64_t timestamp_us = 0;
  unsigned sm_percent = 0;
  unsigned memory_percent = 0;
};

// nvmlDeviceGetEccMode: whether ECC is on now and after the next reboot.
struct EccMode {
  bool current = false, pending = false;
};

enum class MemoryError : unsigned {
  Corrected = kMemoryErrorCorrected,
  Uncorrected = kMemoryErrorUncorrected
};
enum class EccCounter : unsigned { Volatile = kVolatileEcc, Aggregate = kAggregateEcc };

// nvmlDeviceGetRemappedRows (Ampere and newer): a pending remap takes effect at the next reset.
struct RemappedRows {
  unsigned corrected = 0, uncorrected = 0;
  bool pending = false, failure = false;
};

// An engine's utilization over the driver's sampling period (encoder, decoder).
struct EngineUtilization {
  unsigned percent = 0;
  unsigned sampling_period_us = 0;
};

enum class ClockType : unsigned { Graphics = kClockGraphics, Sm = kClockSm, Memory = kClockMem };

class Device {
 public:
  Device(std::shared_ptr<const Library> library, nvmlDevice_t handle, unsigned index)
      : library_(std::move(library)), handle_(handle), index_(index) {}

  unsigned index() const { return index_; }
  nvmlDevice_t handle() const { return handle_; }
  const Library& library() const { return *library_; }
  const std::shared_ptr<const Library>& shared_library() const { return library_; }

  Expected<std::string> name() const;
  Expected<std::string> uuid() const;
  Expected<PciInfo> pci_info() const;
  Expected<unsigned> architecture() const;
  Expected<ComputeCapability> compute_capability() const;
  // Prefers nvmlDeviceGetMemoryInfo_v2 (which also reports reserved memory), falls back to v1.
  Expected<MemoryInfo> memory() const;

  Expected<unsigned> power_usage_mw() const;
  Expected<std::uint64_t> total_energy_mj() const;
  Expected<unsigned> enforced_power_limit_mw() const;
  Expected<unsigned> power_limit_mw() const;
  Expected<unsigned> default_power_limit_mw() const;
  Expected<PowerConstraints> power_limit_constraints_mw() const;
  Status set_power_limit_mw(unsigned milliwatts) const;
  // Locks the SM clock into [min_mhz, max_mhz] (nvmlDeviceSetGpuLockedClocks); root only.
  Status set_locked_clocks_mhz(unsigned min_mhz, unsigned max_mhz) const;
  // Lets the driver choose the SM clock again (nvmlDeviceResetGpuLockedClocks).
  Status reset_locked_clocks() const;

  Expected<unsigned> temperature_c() const;
  Expected<unsigned> clock_mhz(ClockType type) const;
  Expected<unsigned> max_clock_mhz(ClockType type) const;
  Expected<Utilization> utilization() const;
  Expected<std::uint64_t> clock_event_reasons() const;
  // Fills `values` (fieldId and scopeId set by the caller); per-field results are in nvmlReturn.
  Status field_values(std::span<nvmlFieldValue_t> values) const;
  Expected<std::vector<ProcessInfo>> compute_processes() const;
  // The per-process utilization samples newer than `since_us` (0: all the driver keeps).
  // Empty, not an error, when no process ran since then.
  Expected<std::vector<ProcessUtilization>> process_utilization(std::uint64_t since_us) const;

  Expected<bool> gpm_supported() const;

  // Health.
  Expected<EccMode> ecc_mode() const;
  Expected<std::uint64_t> total_ecc_errors(MemoryError type, EccCounter counter) const;
  Expected<RemappedRows> remapped_rows() const;
  Expected<unsigned> pcie_replay_counter() const;
  Expected<EngineUtilization> encoder_utilization() const;
  Expected<EngineUtilization> decoder_utilization() const;
  // The nvmlEventType* bits this GPU can deliver.
  Expected<std::uint64_t> supported_event_types() const;

  // MIG, the calls an unprivileged user may make (device_mig.cpp). On a GPU's handle:
  // its MIG mode (NOT_SUPPORTED: the GPU cannot do MIG), how many MIG devices it can hold (0
  // with MIG off), and the MIG device at index (nullopt where there is none: NOT_FOUND).
  Expected<MigMode> mig_mode() const;
  Expected<unsigned> max_mig_device_count() const;
  Expected<std::optional<Device>> mig_device(unsigned index) const;
  // Every MIG device present now, in index order (empty with MIG off or no instances).
  Expected<std::vector<Device>> mig_devices() const;
  // On a MIG device's handle: its GPU instance id (unique on its GPU), compute instance id
  // (unique in its GPU instance) and resources.
  Expected<unsigned> gpu_instance_id() const;
  Expected<unsigned> compute_instance_id() const;
  Expected<MigAttributes> attributes() const;

 private:
  std::shared_ptr<const Library> library_;
  nvmlDevice_t handle_;
  unsigned index_;
};

// A field value as a double, or nullopt when the driver reported an error for that field.
std::optional<double> field_as_double(const nvmlFieldValue_t& value);

// Human name of an architecture id ("Hopper"), "unknown (N)" for ids newer than gpuscope.
std::string architecture_name(unsigned architecture);

}  // namespace gpuscope::nvml
