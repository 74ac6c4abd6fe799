#include "nvml/device.hpp"

#include <fmt/format.h>

#include <array>
#include <cstring>

#include "core/clock_events.hpp"

// The one list of names (core/clock_events.hpp) must use the ABI's bits.
static_assert(gpuscope::nvml::kClocksEventGpuIdle == gpuscope::kClockEventGpuIdle);
static_assert(gpuscope::nvml::kClocksEventApplicationsClocksSetting ==
              gpuscope::kClockEventApplicationsClocksSetting);
static_assert(gpuscope::nvml::kClocksEventSwPowerCap == gpuscope::kClockEventSwPowerCap);
static_assert(gpuscope::nvml::kClocksEventHwSlowdown == gpuscope::kClockEventHwSlowdown);
static_assert(gpuscope::nvml::kClocksEventSyncBoost == gpuscope::kClockEventSyncBoost);
static_assert(gpuscope::nvml::kClocksEventSwThermalSlowdown ==
              gpuscope::kClockEventSwThermalSlowdown);
static_assert(gpuscope::nvml::kClocksEventHwThermalSlowdown ==
              gpuscope::kClockEventHwThermalSlowdown);
static_assert(gpuscope::nvml::kClocksEventHwPowerBrakeSlowdown ==
              gpuscope::kClockEventHwPowerBrakeSlowdown);
static_assert(gpuscope::nvml::kClocksEventDisplayClockSetting ==
              gpuscope::kClockEventDisplayClockSetting);

namespace gpuscope::nvml {
namespace {

// Takes the status as a separate argument on purpose: callers must evaluate the call before
// reading its output (argument evaluation order is unspecified), so they pass a named status.
template <typename T>
Expected<T> value_if(const Status& status, T value) {
  if (!status) return tl::unexpected(status.error());
  return value;
}

}  // namespace

Expected<std::string> Device::name() const {
  std::array<char, kDeviceNameBufferSize> buffer{};
  auto status = library_->call(&FunctionTable::DeviceGetName, handle_, buffer.data(),
                               static_cast<unsigned>(buffer.size()));
  return value_if(status, std::string(buffer.data()));
}

Expected<std::string> Device::uuid() const {
  std::array<char, kDeviceUuidBufferSize> buffer{};
  auto status = library_->call(&FunctionTable::DeviceGetUUID, handle_, buffer.data(),
                               static_cast<unsigned>(buffer.size()));
  return value_if(status, std::string(buffer.data()));
}

Expected<PciInfo> Device::pci_info() const {
  nvmlPciInfo_t raw{};
  auto status = library_->call(&FunctionTable::DeviceGetPciInfo, handle_, &raw);
  if (!status) return tl::unexpected(status.error());
  PciInfo info;
  info.bus_id = std::string(raw.busId, strnlen(raw.busId, sizeof(raw.busId)));
  info.domain = raw.domain;
  info.bus = raw.bus;
  info.device = raw.device;
  info.pci_device_id = raw.pciDeviceId;
  info.pci_subsystem_id = raw.pciSubSystemId;
  return info;
}

Expected<unsigned> Device::architecture() const {
  unsigned arch = 0;
  const Status status = library_->call(&FunctionTable::DeviceGetArchitecture, handle_, &arch);
  return value_if(status, arch);
}

Expected<ComputeCapability> Device::compute_capability() const {
  ComputeCapability cc;
  auto status =
      library_->call(&FunctionTable::DeviceGetCudaComputeCapability, handle_, &cc.major, &cc.minor);
  return value_if(status, cc);
}

Expected<MemoryInfo> Device::memory() const {
  if (library_->has(&FunctionTable::DeviceGetMemoryInfoV2)) {
    nvmlMemory_v2_t raw{};
    raw.version = kMemoryV2Version;
    if (library_->call(&FunctionTable::DeviceGetMemoryInfoV2, handle_, &raw)) {
      return MemoryInfo{raw.total, raw.free, raw.used, raw.reserved};
    }
    // Some drivers export _v2 but reject it (version mismatch); v1 still answers.
  }
  nvmlMemory_t raw{};
  auto status = library_->call(&FunctionTable::DeviceGetMemoryInfo, handle_, &raw);
  return value_if(status, MemoryInfo{raw.total, raw.free, raw.used, 0});
}

Expected<unsigned> Device::power_usage_mw() const {
  unsigned mw = 0;
  const Status status = library_->call(&FunctionTable::DeviceGetPowerUsage, handle_, &mw);
  return value_if(status, mw);
}

Expected<std::uint64_t> Device::total_energy_mj() const {
  unsigned long long mj = 0;
  auto status = library_->call(&FunctionTable::DeviceGetTotalEnergyConsumption, handle_, &mj);
  return value_if(status, static_cast<std::uint64_t>(mj));
}

Expected<unsigned> Device::enforced_power_limit_mw() const {
  unsigned mw = 0;
  const Status status = library_->call(&FunctionTable::DeviceGetEnforcedPowerLimit, handle_, &mw);
  return value_if(status, mw);
}

Expected<unsigned> Device::power_limit_mw() const {
  unsigned mw = 0;
  const Status status = library_->call(&FunctionTable::DeviceGetPowerManagementLimit, handle_, &mw);
  return value_if(status, mw);
}

Expected<unsigned> Device::default_power_limit_mw() const {
  unsigned mw = 0;
  auto status = library_->call(&FunctionTable::DeviceGetPowerManagementDefaultLimit, handle_, &mw);
  return value_if(status, mw);
}

Expected<PowerConstraints> Device::power_limit_constraints_mw() const {
  PowerConstraints c;
  auto status = library_->call(&FunctionTable::DeviceGetPowerManagementLimitConstraints, handle_,
                               &c.min_mw, &c.max_mw);
  return value_if(status, c);
}

Status Device::set_power_limit_mw(unsigned milliwatts) const {
  return library_->call(&FunctionTable::DeviceSetPowerManagementLimit, handle_, milliwatts);
}

Status Device::set_locked_clocks_mhz(unsigned min_mhz, unsigned max_mhz) const {
  return library_->call(&FunctionTable::DeviceSetGpuLockedClocks, handle_, min_mhz, max_mhz);
}

Status Device::reset_locked_clocks() const {
  return library_->call(&FunctionTable::DeviceResetGpuLockedClocks, handle_);
}

Expected<unsigned> Device::temperature_c() const {
  unsigned celsius = 0;
  auto status =
      library_->call(&FunctionTable::DeviceGetTemperature, handle_, kTemperatureGpu, &celsius);
  return value_if(status, celsius);
}

Expected<unsigned> Device::clock_mhz(ClockType type) const {
  unsigned mhz = 0;
  auto status = library_->call(&FunctionTable::DeviceGetClockInfo, handle_,
                               static_cast<unsigned>(type), &mhz);
  return value_if(status, mhz);
}

Expected<unsigned> Device::max_clock_mhz(ClockType type) const {
  unsigned mhz = 0;
  auto status = library_->call(&FunctionTable::DeviceGetMaxClockInfo, handle_,
                               static_cast<unsigned>(type), &mhz);
  return value_if(status, mhz);
}

Expected<Utilization> Device::utilization() const {
  nvmlUtilization_t raw{};
  auto status = library_->call(&FunctionTable::DeviceGetUtilizationRates, handle_, &raw);
  return value_if(status, Utilization{raw.gpu, raw.memory});
}

Expected<std::uint64_t> Device::clock_event_reasons() const {
  unsigned long long reasons = 0;
  auto status =
      library_->call(&FunctionTable::DeviceGetCurrentClocksEventReasons, handle_, &reasons);
  return value_if(status, static_cast<std::uint64_t>(reasons));
}

Status Device::field_values(std::span<nvmlFieldValue_t> values) const {
  return library_->call(&FunctionTable::DeviceGetFieldValues, handle_,
                        static_cast<int>(values.size()), values.data());
}

Expected<std::vector<ProcessInfo>> Device::compute_processes() const {
  // Ask for the count first, then retry while processes appear between the two calls.
  unsigned count = 0;
  auto status =
      library_->call(&FunctionTable::DeviceGetComputeRunningProcesses, handle_, &count, nullptr);
  if (status) return std::vector<ProcessInfo>{};
  for (int attempt = 0; attempt < 4 && status.error().code == kErrorInsufficientSize; ++attempt) {
    std::vector<nvmlProcessInfo_t> raw(count + 8);
    count = static_cast<unsigned>(raw.size());
    status = library_->call(&FunctionTable::DeviceGetComputeRunningProcesses, handle_, &count,
                            raw.data());
    if (status) {
      std::vector<ProcessInfo> processes;
      processes.reserve(count);
      for (unsigned i = 0; i < count; ++i) {
        // NVML_VALUE_NOT_AVAILABLE (all ones): the driver may not tell (Windows WDDM, some
        // containers).
        const auto bytes = raw[i].usedGpuMemory;
        ProcessInfo process;
        process.pid = raw[i].pid;
        if (bytes != ~0ULL) process.used_memory_bytes = bytes;
        if (raw[i].gpuInstanceId != kNoInstanceId) process.gpu_instance_id = raw[i].gpuInstanceId;
        if (raw[i].computeInstanceId != kNoInstanceId) {
          process.compute_instance_id = raw[i].computeInstanceId;
        }
        processes.push_back(process);
      }
      return processes;
    }
  }
  return tl::unexpected(status.error());
}

Expected<std::vector<ProcessUtilization>> Device::process_utilization(
    std::uint64_t since_us) const {
  unsigned count = 0;
  auto status = library_->call(&FunctionTable::DeviceGetProcessUtilization, handle_, nullptr,
                               &count, static_cast<unsigned long long>(since_us));
  // NOT_FOUND: no process ran since `since_us`.
  if (status || status.error().code == kErrorNotFound) return std::vector<ProcessUtilization>{};
  for (int attempt = 0; attempt < 4 && status.error().code == kErrorInsufficientSize; ++attempt) {
    std::vector<nvmlProcessUtilizationSample_t> raw(count + 8);
    count = static_cast<unsigned>(raw.size());
    status = library_->call(&FunctionTable::DeviceGetProcessUtilization, handle_, raw.data(),
                            &count, static_cast<unsigned long long>(since_us));
    if (status) {
      std::vector<ProcessUtilization> out;
      for (unsigned i = 0; i < count && i < raw.size(); ++i) {
        out.push_back({raw[i].pid, raw[i].timeStamp, raw[i].smUtil, raw[i].memUtil});
      }
      return out;
    }
    if (status.error().code == kErrorNotFound) return std::vector<ProcessUtilization>{};
  }
  return tl::unexpected(status.error());
}

Expected<bool> Device::gpm_supported() const {
  nvmlGpmSupport_t support{};
  support.version = kGpmSupportVersion;
  auto status = library_->call(&FunctionTable::GpmQueryDeviceSupport, handle_, &support);
  return value_if(status, support.isSupportedDevice != 0);
}

std::optional<double> field_as_double(const nvmlFieldValue_t& v) {
  if (v.nvmlReturn != kSuccess) return std::nullopt;
  switch (v.valueType) {
    case kValueTypeDouble:
      return v.value.dVal;
    case kValueTypeUnsignedInt:
      return static_cast<double>(v.value.uiVal);
    case kValueTypeUnsignedLong:
      return static_cast<double>(v.value.ulVal);
    case kValueTypeUnsignedLongLong:
      return static_cast<double>(v.value.ullVal);
    case kValueTypeSignedLongLong:
      return static_cast<double>(v.value.sllVal);
    case kValueTypeSignedInt:
      return static_cast<double>(v.value.siVal);
    case kValueTypeUnsignedShort:
      return static_cast<double>(v.value.usVal);
    default:
      return std::nullopt;
  }
}

std::string architecture_name(unsigned architecture) {
  switch (architecture) {
    case kArchKepler:
      return "Kepler";
    case kArchMaxwell:
      return "Maxwell";
    case kArchPascal:
      return "Pascal";
    case kArchVolta:
      return "Volta";
    case kArchTuring:
      return "Turing";
    case kArchAmpere:
      return "Ampere";
    case kArchAda:
      return "Ada Lovelace";
    case kArchHopper:
      return "Hopper";
    case kArchBlackwell:
      return "Blackwell";
    default:
      return fmt::format("unknown ({})", architecture);
  }
}

Expected<EccMode> Device::ecc_mode() const {
  unsigned current = 0, pending = 0;
  auto status = library_->call(&FunctionTable::DeviceGetEccMode, handle_, &current, &pending);
  return value_if(status, EccMode{current == kFeatureEnabled, pending == kFeatureEnabled});
}

Expected<std::uint64_t> Device::total_ecc_errors(MemoryError type, EccCounter counter) const {
  unsigned long long count = 0;
  auto status = library_->call(&FunctionTable::DeviceGetTotalEccErrors, handle_,
                               static_cast<unsigned>(type), static_cast<unsigned>(counter), &count);
  return value_if(status, static_cast<std::uint64_t>(count));
}

Expected<RemappedRows> Device::remapped_rows() const {
  unsigned corrected = 0, uncorrected = 0, pending = 0, failure = 0;
  auto status = library_->call(&FunctionTable::DeviceGetRemappedRows, handle_, &corrected,
                               &uncorrected, &pending, &failure);
  return value_if(status, RemappedRows{corrected, uncorrected, pending != 0, failure != 0});
}

Expected<unsigned> Device::pcie_replay_counter() const {
  unsigned value = 0;
  auto status = library_->call(&FunctionTable::DeviceGetPcieReplayCounter, handle_, &value);
  return value_if(status, value);
}

Expected<EngineUtilization> Device::encoder_utilization() const {
  EngineUtilization u;
  auto status = library_->call(&FunctionTable::DeviceGetEncoderUtilization, handle_, &u.percent,
                               &u.sampling_period_us);
  return value_if(status, u);
}

Expected<EngineUtilization> Device::decoder_utilization() const {
  EngineUtilization u;
  auto status = library_->call(&FunctionTable::DeviceGetDecoderUtilization, handle_, &u.percent,
                               &u.sampling_period_us);
  return value_if(status, u);
}

Expected<std::uint64_t> Device::supported_event_types() const {
  unsigned long long types = 0;
  auto status = library_->call(&FunctionTable::DeviceGetSupportedEventTypes, handle_, &types);
  return value_if(status, static_cast<std::uint64_t>(types));
}

}  // namespace gpuscope::nvml
