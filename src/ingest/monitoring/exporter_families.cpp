#include "ingest/monitoring/exporter_families.hpp"

#include <algorithm>

#include "dcgm/abi.hpp"
#include "dcgm/fields.hpp"

namespace gpuscope::ingest {
namespace {

using M = Metric;
constexpr Family G = Family::Gpuscope;
constexpr Family D = Family::Dcgm;
constexpr Family J = Family::Jobstats;

// DCGM's unit to the catalog's for a field dcgm/fields.hpp maps (ratios ×100, MiB to bytes).
constexpr double dcgm_scale(unsigned short field) {
  return dcgm::field_mapping(field)->scale;
}

// clang-format off
constexpr ExportedName kNames[] = {
  // gpuscope serve (--naming gpuscope, and profile/serve --push): the catalog in base units
  // (exporter/metric_names.cpp; a unit test checks these against it).
  {G, "gpuscope_power_watts", M::PowerW, 1},
  {G, "gpuscope_power_instant_watts", M::PowerInstantW, 1},
  {G, "gpuscope_power_average_watts", M::PowerAverageW, 1},
  {G, "gpuscope_module_power_watts", M::ModulePowerW, 1},
  {G, "gpuscope_energy_joules_total", M::EnergyMj, 1e3, true},
  {G, "gpuscope_power_limit_watts", M::PowerLimitW, 1},
  {G, "gpuscope_gpu_util_ratio", M::GpuUtilPct, 100},
  {G, "gpuscope_mem_util_ratio", M::MemUtilPct, 100},
  {G, "gpuscope_sm_clock_hertz", M::SmClockMhz, 1e-6},
  {G, "gpuscope_mem_clock_hertz", M::MemClockMhz, 1e-6},
  {G, "gpuscope_graphics_clock_hertz", M::GraphicsClockMhz, 1e-6},
  {G, "gpuscope_temperature_celsius", M::TemperatureC, 1},
  {G, "gpuscope_memory_temperature_celsius", M::MemoryTemperatureC, 1},
  {G, "gpuscope_memory_used_bytes", M::MemoryUsedBytes, 1},
  {G, "gpuscope_memory_free_bytes", M::MemoryFreeBytes, 1},
  {G, "gpuscope_memory_reserved_bytes", M::MemoryReservedBytes, 1},
  {G, "gpuscope_clock_event_reasons", M::ClockEventReasons, 1},
  {G, "gpuscope_pcie_tx_bytes_total", M::PcieTxBytes, 1, true},
  {G, "gpuscope_pcie_rx_bytes_total", M::PcieRxBytes, 1, true},
  {G, "gpuscope_graphics_active_ratio", M::GraphicsActivePct, 100},
  {G, "gpuscope_sm_active_ratio", M::SmActivePct, 100},
  {G, "gpuscope_sm_occupancy_ratio", M::SmOccupancyPct, 100},
  {G, "gpuscope_tensor_active_ratio", M::TensorActivePct, 100},
  {G, "gpuscope_dfma_tensor_active_ratio", M::DfmaTensorActivePct, 100},
  {G, "gpuscope_hmma_tensor_active_ratio", M::HmmaTensorActivePct, 100},
  {G, "gpuscope_imma_tensor_active_ratio", M::ImmaTensorActivePct, 100},
  {G, "gpuscope_dram_active_ratio", M::DramActivePct, 100},
  {G, "gpuscope_fp64_active_ratio", M::Fp64ActivePct, 100},
  {G, "gpuscope_fp32_active_ratio", M::Fp32ActivePct, 100},
  {G, "gpuscope_fp16_active_ratio", M::Fp16ActivePct, 100},
  {G, "gpuscope_integer_active_ratio", M::IntegerActivePct, 100},
  {G, "gpuscope_pcie_tx_bytes_per_second", M::PcieTxBytesPerS, 1},
  {G, "gpuscope_pcie_rx_bytes_per_second", M::PcieRxBytesPerS, 1},
  {G, "gpuscope_nvlink_tx_bytes_per_second", M::NvlinkTxBytesPerS, 1},
  {G, "gpuscope_nvlink_rx_bytes_per_second", M::NvlinkRxBytesPerS, 1},
  {G, "gpuscope_umc_activity_ratio", M::UmcActivityPct, 100},
  {G, "gpuscope_mm_activity_ratio", M::MmActivityPct, 100},
  {G, "gpuscope_xgmi_read_bytes_total", M::XgmiReadBytes, 1, true},
  {G, "gpuscope_xgmi_write_bytes_total", M::XgmiWriteBytes, 1, true},
  {G, "gpuscope_amd_throttle_status", M::AmdThrottleStatus, 1},

  // dcgm-exporter 2.x to 4.8 (DCGM 2 to 4.6 field names): W, mJ, %, MHz, °C, MiB, ratios.
  {D, "DCGM_FI_DEV_POWER_USAGE", M::PowerW, 1},
  {D, "DCGM_FI_DEV_POWER_USAGE_INSTANT", M::PowerInstantW, 1},
  {D, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", M::EnergyMj, 1, true},
  {D, "DCGM_FI_DEV_ENFORCED_POWER_LIMIT", M::PowerLimitW, 1},
  {D, "DCGM_FI_DEV_GPU_UTIL", M::GpuUtilPct, dcgm_scale(dcgm::kDevGpuUtil)},
  {D, "DCGM_FI_DEV_MEM_COPY_UTIL", M::MemUtilPct, 1},
  {D, "DCGM_FI_DEV_SM_CLOCK", M::SmClockMhz, 1},
  {D, "DCGM_FI_DEV_MEM_CLOCK", M::MemClockMhz, 1},
  {D, "DCGM_FI_DEV_GPU_TEMP", M::TemperatureC, 1},
  {D, "DCGM_FI_DEV_MEMORY_TEMP", M::MemoryTemperatureC, 1},
  {D, "DCGM_FI_DEV_FB_USED", M::MemoryUsedBytes, dcgm_scale(dcgm::kDevFbUsed)},
  {D, "DCGM_FI_DEV_FB_FREE", M::MemoryFreeBytes, dcgm_scale(dcgm::kDevFbFree)},
  {D, "DCGM_FI_DEV_FB_RESERVED", M::MemoryReservedBytes, dcgm_scale(dcgm::kDevFbReserved)},
  {D, "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", M::ClockEventReasons, 1},
  {D, "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", M::ClockEventReasons, 1},
  {D, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", M::GraphicsActivePct, dcgm_scale(dcgm::kProfGrEngineActive)},
  {D, "DCGM_FI_PROF_SM_ACTIVE", M::SmActivePct, dcgm_scale(dcgm::kProfSmActive)},
  {D, "DCGM_FI_PROF_SM_OCCUPANCY", M::SmOccupancyPct, dcgm_scale(dcgm::kProfSmOccupancy)},
  {D, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", M::TensorActivePct, dcgm_scale(dcgm::kProfTensorActive)},
  {D, "DCGM_FI_PROF_PIPE_TENSOR_DFMA_ACTIVE", M::DfmaTensorActivePct, dcgm_scale(1015)},
  {D, "DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE", M::HmmaTensorActivePct, dcgm_scale(1014)},
  {D, "DCGM_FI_PROF_PIPE_TENSOR_IMMA_ACTIVE", M::ImmaTensorActivePct, dcgm_scale(1013)},
  {D, "DCGM_FI_PROF_DRAM_ACTIVE", M::DramActivePct, dcgm_scale(dcgm::kProfDramActive)},
  {D, "DCGM_FI_PROF_PIPE_FP64_ACTIVE", M::Fp64ActivePct, dcgm_scale(dcgm::kProfFp64Active)},
  {D, "DCGM_FI_PROF_PIPE_FP32_ACTIVE", M::Fp32ActivePct, dcgm_scale(dcgm::kProfFp32Active)},
  {D, "DCGM_FI_PROF_PIPE_FP16_ACTIVE", M::Fp16ActivePct, dcgm_scale(dcgm::kProfFp16Active)},
  {D, "DCGM_FI_PROF_PIPE_INT_ACTIVE", M::IntegerActivePct, dcgm_scale(1016)},
  {D, "DCGM_FI_PROF_PCIE_TX_BYTES", M::PcieTxBytesPerS, dcgm_scale(dcgm::kProfPcieTxBytes)},
  {D, "DCGM_FI_PROF_PCIE_RX_BYTES", M::PcieRxBytesPerS, dcgm_scale(dcgm::kProfPcieRxBytes)},
  {D, "DCGM_FI_PROF_NVLINK_TX_BYTES", M::NvlinkTxBytesPerS, dcgm_scale(dcgm::kProfNvlinkTxBytes)},
  {D, "DCGM_FI_PROF_NVLINK_RX_BYTES", M::NvlinkRxBytesPerS, dcgm_scale(dcgm::kProfNvlinkRxBytes)},
  // dcgm-exporter 4.9 (DCGM 4.7 names; 4.6 already knew most): the same fields renamed, some
  // in new units (Hz, J, ratios, bytes).
  {D, "DCGM_FI_DEV_BOARD_POWER_WATTS", M::PowerW, 1},
  {D, "DCGM_FI_DEV_BOARD_POWER_RAW_WATTS", M::PowerInstantW, 1},
  {D, "DCGM_FI_DEV_GPU_ENERGY_JOULES_TOTAL", M::EnergyMj, 1e3, true},
  {D, "DCGM_FI_DEV_BOARD_POWER_LIMIT_ENFORCED_WATTS", M::PowerLimitW, 1},
  {D, "DCGM_FI_DEV_GPU_UTIL_RATIO", M::GpuUtilPct, 100, false, {}, {}, true},
  {D, "DCGM_FI_DEV_MEM_COPY_UTIL_RATIO", M::MemUtilPct, 100, false, {}, {}, true},
  {D, "DCGM_FI_DEV_SM_CLOCK_HERTZ", M::SmClockMhz, 1e-6},
  {D, "DCGM_FI_DEV_MEMORY_CLOCK_HERTZ", M::MemClockMhz, 1e-6},
  {D, "DCGM_FI_DEV_GPU_TEMP_CELSIUS", M::TemperatureC, 1},
  {D, "DCGM_FI_DEV_MEMORY_TEMP_CELSIUS", M::MemoryTemperatureC, 1},
  {D, "DCGM_FI_DEV_FB_USED_BYTES", M::MemoryUsedBytes, 1},
  {D, "DCGM_FI_DEV_FB_FREE_BYTES", M::MemoryFreeBytes, 1},
  {D, "DCGM_FI_DEV_FB_RESERVED_BYTES", M::MemoryReservedBytes, 1},
  {D, "DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO", M::GraphicsActivePct, 100},
  {D, "DCGM_FI_PROF_SM_UTIL_RATIO", M::SmActivePct, 100},
  {D, "DCGM_FI_PROF_SM_OCCUPANCY_RATIO", M::SmOccupancyPct, 100},
  {D, "DCGM_FI_PROF_TENSOR_UTIL_RATIO", M::TensorActivePct, 100},
  {D, "DCGM_FI_PROF_DFMA_UTIL_RATIO", M::DfmaTensorActivePct, 100},
  {D, "DCGM_FI_PROF_HMMA_UTIL_RATIO", M::HmmaTensorActivePct, 100},
  {D, "DCGM_FI_PROF_IMMA_UTIL_RATIO", M::ImmaTensorActivePct, 100},
  {D, "DCGM_FI_PROF_DRAM_UTIL_RATIO", M::DramActivePct, 100},
  {D, "DCGM_FI_PROF_FP64_UTIL_RATIO", M::Fp64ActivePct, 100},
  {D, "DCGM_FI_PROF_FP32_UTIL_RATIO", M::Fp32ActivePct, 100},
  {D, "DCGM_FI_PROF_FP16_UTIL_RATIO", M::Fp16ActivePct, 100},
  {D, "DCGM_FI_PROF_INT_UTIL_RATIO", M::IntegerActivePct, 100},
  // dcgm-exporter's 1.x names (etc/1.x-compatibility-metrics.csv, --use-old-namespace).
  {D, "dcgm_power_usage", M::PowerW, 1},
  {D, "dcgm_total_energy_consumption", M::EnergyMj, 1, true},
  {D, "dcgm_gpu_utilization", M::GpuUtilPct, 1},
  {D, "dcgm_mem_copy_utilization", M::MemUtilPct, 1},
  {D, "dcgm_sm_clock", M::SmClockMhz, 1},
  {D, "dcgm_memory_clock", M::MemClockMhz, 1},
  {D, "dcgm_gpu_temp", M::TemperatureC, 1},
  {D, "dcgm_memory_temp", M::MemoryTemperatureC, 1},
  {D, "dcgm_fb_used", M::MemoryUsedBytes, dcgm_scale(dcgm::kDevFbUsed)},
  {D, "dcgm_fb_free", M::MemoryFreeBytes, dcgm_scale(dcgm::kDevFbFree)},
  {D, "dcgm_fi_prof_gr_engine_active", M::GraphicsActivePct, dcgm_scale(dcgm::kProfGrEngineActive)},
  {D, "dcgm_fi_prof_pipe_tensor_active", M::TensorActivePct, dcgm_scale(dcgm::kProfTensorActive)},
  {D, "dcgm_fi_prof_dram_active", M::DramActivePct, dcgm_scale(dcgm::kProfDramActive)},

  // jobstats' exporter (plazonic/nvidia_gpu_prometheus_exporter). Its GPM series are named
  // *_percent but it divides NVML's percent by 100: they are 0-1 ratios. PCIe and NVLink are
  // already converted from MiB/s to bytes/s; clocks are MHz.
  {J, "nvidia_gpu_duty_cycle", M::GpuUtilPct, 1},
  {J, "nvidia_gpu_memory_used_bytes", M::MemoryUsedBytes, 1},
  {J, "nvidia_gpu_power_usage_milliwatts", M::PowerW, 1e-3},
  {J, "nvidia_gpu_temperature_celsius", M::TemperatureC, 1},
  {J, "nvidia_gpu_clock", M::SmClockMhz, 1, false, "type", "sm"},
  {J, "nvidia_gpu_clock", M::MemClockMhz, 1, false, "type", "mem"},
  {J, "nvidia_gpu_clock", M::GraphicsClockMhz, 1, false, "type", "graphics"},
  // nvidia_gpu_clock_event_reason is one series per active reason (value: its bit), not the
  // bitmask: not read yet (clock events stay NULL for this family).
  {J, "nvidia_gpu_graphics_util_percent", M::GraphicsActivePct, 100},
  {J, "nvidia_gpu_sm_util_percent", M::SmActivePct, 100},
  {J, "nvidia_gpu_sm_occupancy_percent", M::SmOccupancyPct, 100},
  {J, "nvidia_gpu_integer_util", M::IntegerActivePct, 100},
  {J, "nvidia_gpu_any_tensor_util_percent", M::TensorActivePct, 100},
  {J, "nvidia_gpu_dram_bw_util_percent", M::DramActivePct, 100},
  {J, "nvidia_gpu_fp64_util_percent", M::Fp64ActivePct, 100},
  {J, "nvidia_gpu_fp32_util_percent", M::Fp32ActivePct, 100},
  {J, "nvidia_gpu_fp16_util_percent", M::Fp16ActivePct, 100},
  {J, "nvidia_gpu_pcie_tx_per_sec", M::PcieTxBytesPerS, 1},
  {J, "nvidia_gpu_pcie_rx_per_sec", M::PcieRxBytesPerS, 1},
  {J, "nvidia_gpu_nvlink_total_tx_per_sec", M::NvlinkTxBytesPerS, 1},
  {J, "nvidia_gpu_nvlink_total_rx_per_sec", M::NvlinkRxBytesPerS, 1},
};
// clang-format on

struct Description {
  Family family;
  std::string_view name;
  double bytes_scale;  // value × this = memory size in bytes; 0: no size
};

constexpr Description kDescriptions[] = {
    {G, "gpuscope_gpu_info", 0},
    {D, "DCGM_FI_DEV_FB_TOTAL", dcgm::kMiB},
    {D, "DCGM_FI_DEV_FB_CAPACITY_BYTES", 1},
    {J, "nvidia_gpu_memory_total_bytes", 1},
    {J, kJobstatsJobId, 0},
};

const Description* description(const std::string& name) {
  for (const auto& d : kDescriptions) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

const std::string* find(const tsdb::Labels& labels, std::string_view key) {
  const auto it = labels.find(std::string(key));
  return it == labels.end() ? nullptr : &it->second;
}

}  // namespace

std::string_view family_name(Family family) {
  switch (family) {
    case Family::Gpuscope:
      return "gpuscope serve";
    case Family::Dcgm:
      return "dcgm-exporter";
    case Family::Jobstats:
      return "jobstats (nvidia_gpu_*)";
  }
  return "?";
}

std::span<const ExportedName> exported_names() {
  return kNames;
}

const ExportedName* exported_name(const tsdb::Labels& labels) {
  const std::string* name = find(labels, "__name__");
  if (name == nullptr) return nullptr;
  for (const auto& n : kNames) {
    if (n.name != *name) continue;
    if (n.label.empty()) return &n;
    const std::string* value = find(labels, n.label);
    if (value != nullptr && *value == n.value) return &n;
  }
  return nullptr;
}

bool is_description_series(const std::string& name) {
  return description(name) != nullptr;
}

std::optional<double> memory_total_bytes(const std::string& name, double value) {
  const Description* d = description(name);
  if (d == nullptr || d->bytes_scale == 0 || !(value > 0)) return std::nullopt;
  return value * d->bytes_scale;
}

std::optional<Family> family_of(const std::string& name) {
  for (const auto& n : kNames) {
    if (n.name == name) return n.family;
  }
  if (const Description* d = description(name)) return d->family;
  return std::nullopt;
}

std::string names_regex(Family family) {
  std::vector<std::string_view> names;
  for (const auto& n : kNames) {
    if (n.family == family) names.push_back(n.name);
  }
  for (const auto& d : kDescriptions) {
    if (d.family == family) names.push_back(d.name);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::string out;
  for (const auto& name : names) {
    if (!out.empty()) out += '|';
    out += name;  // series names hold no regex metacharacters
  }
  return out;
}

}  // namespace gpuscope::ingest
