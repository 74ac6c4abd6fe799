// The metric catalog: every per-GPU quantity gpuscope samples, with its unit, meaning and source.
// The run database has one samples column per metric, named as here, and a `metrics` table
// holding this catalog, so a database describes itself.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "core/vendor.hpp"

namespace gpuscope {

// Index into kMetrics; the order is the column order of the samples table.
enum class Metric : std::size_t {
  PowerW,
  PowerInstantW,
  PowerAverageW,
  ModulePowerW,
  EnergyMj,
  PowerLimitW,
  GpuUtilPct,
  MemUtilPct,
  SmClockMhz,
  MemClockMhz,
  GraphicsClockMhz,
  TemperatureC,
  MemoryTemperatureC,
  MemoryUsedBytes,
  MemoryFreeBytes,
  MemoryReservedBytes,
  ClockEventReasons,
  PcieTxBytes,
  PcieRxBytes,
  GraphicsActivePct,
  SmActivePct,
  SmOccupancyPct,
  TensorActivePct,
  DfmaTensorActivePct,
  HmmaTensorActivePct,
  ImmaTensorActivePct,
  DramActivePct,
  Fp64ActivePct,
  Fp32ActivePct,
  Fp16ActivePct,
  IntegerActivePct,
  PcieTxBytesPerS,
  PcieRxBytesPerS,
  NvlinkTxBytesPerS,
  NvlinkRxBytesPerS,
  // AMD's own (schema 1.12; docs/amd.md): NULL on NVIDIA GPUs.
  UmcActivityPct,
  MmActivityPct,
  XgmiReadBytes,
  XgmiWriteBytes,
  AmdThrottleStatus,
  // Derived by analysis from the stored metrics, never a samples column (docs/analysis.md).
  FlopActivePct,
  Count
};

inline constexpr std::size_t kMetricCount = static_cast<std::size_t>(Metric::Count);
// The metrics the run database stores (samples and sample_chunks columns): those before the
// derived ones.
inline constexpr std::size_t kStoredMetricCount = static_cast<std::size_t>(Metric::FlopActivePct);

enum class MetricKind {
  Gauge,    // a level at the sample time (power, temperature, utilization)
  Counter,  // monotonically increasing total (energy, PCIe bytes); use differences
  Bitmask,  // a set of flags (clock event reasons)
};

enum class MetricStorage { Real, Integer };

struct MetricInfo {
  Metric id;
  std::string_view name;  // samples column and JSON key, snake_case with the unit as suffix
  std::string_view unit;  // "W", "mJ", "%", "MHz", "°C", "B", "B/s", "bitmask"
  MetricKind kind;
  MetricStorage storage;
  std::string_view source;  // the NVML call (or AMD library call) it comes from
  std::string_view description;
};

// clang-format off
inline constexpr std::array<MetricInfo, kMetricCount> kMetrics = {{
  {Metric::PowerW, "power_w", "W", MetricKind::Gauge, MetricStorage::Real,
   "nvmlDeviceGetPowerUsage", "board power draw (1 s average on Ampere and newer except GA100)"},
  {Metric::PowerInstantW, "power_instant_w", "W", MetricKind::Gauge, MetricStorage::Real,
   "nvmlDeviceGetFieldValues(186)", "instantaneous power (averages ~25 ms of each 100 ms)"},
  {Metric::PowerAverageW, "power_average_w", "W", MetricKind::Gauge, MetricStorage::Real,
   "nvmlDeviceGetFieldValues(185)", "power averaged over the last second"},
  {Metric::ModulePowerW, "module_power_w", "W", MetricKind::Gauge, MetricStorage::Real,
   "nvmlDeviceGetFieldValues(186, module scope)", "whole-module power (Grace Hopper: CPU+GPU+memory)"},
  {Metric::EnergyMj, "energy_mj", "mJ", MetricKind::Counter, MetricStorage::Integer,
   "nvmlDeviceGetTotalEnergyConsumption", "energy counter since the driver loaded; use differences"},
  {Metric::PowerLimitW, "power_limit_w", "W", MetricKind::Gauge, MetricStorage::Real,
   "nvmlDeviceGetEnforcedPowerLimit", "power limit in force"},
  {Metric::GpuUtilPct, "gpu_util_pct", "%", MetricKind::Gauge, MetricStorage::Real,
   "nvmlDeviceGetUtilizationRates", "share of time a kernel was running"},
  {Metric::MemUtilPct, "mem_util_pct", "%", MetricKind::Gauge, MetricStorage::Real,
   "nvmlDeviceGetUtilizationRates", "share of time device memory was read or written"},
  {Metric::SmClockMhz, "sm_clock_mhz", "MHz", MetricKind::Gauge, MetricStorage::Real,
   "nvmlDeviceGetClockInfo(SM)", "streaming multiprocessor clock"},
  {Metric::MemClockMhz, "mem_clock_mhz", "MHz", MetricKind::Gauge, MetricStorage::Real,
   "nvmlDeviceGetClockInfo(MEM)", "memory clock"},
  {Metric::GraphicsClockMhz, "graphics_clock_mhz", "MHz", MetricKind::Gauge, MetricStorage::Real,
   "nvmlDeviceGetClockInfo(GRAPHICS)", "graphics clock"},
  {Metric::TemperatureC, "temperature_c", "°C", MetricKind::Gauge, MetricStorage::Real,
   "nvmlDeviceGetTemperature", "GPU core temperature"},
  {Metric::MemoryTemperatureC, "memory_temperature_c", "°C", MetricKind::Gauge, MetricStorage::Real,
   "nvmlDeviceGetFieldValues(82)", "HBM temperature"},
  {Metric::MemoryUsedBytes, "memory_used_bytes", "B", MetricKind::Gauge, MetricStorage::Integer,
   "nvmlDeviceGetMemoryInfo", "device memory in use"},
  {Metric::MemoryFreeBytes, "memory_free_bytes", "B", MetricKind::Gauge, MetricStorage::Integer,
   "nvmlDeviceGetMemoryInfo", "device memory free"},
  {Metric::MemoryReservedBytes, "memory_reserved_bytes", "B", MetricKind::Gauge,
   MetricStorage::Integer, "nvmlDeviceGetMemoryInfo_v2", "device memory reserved by the driver"},
  {Metric::ClockEventReasons, "clock_event_reasons", "bitmask", MetricKind::Bitmask,
   MetricStorage::Integer, "nvmlDeviceGetCurrentClocksEventReasons",
   "why clocks are held down (idle, power cap, thermal, ...)"},
  {Metric::PcieTxBytes, "pcie_tx_bytes", "B", MetricKind::Counter, MetricStorage::Integer,
   "nvmlDeviceGetFieldValues(197)", "PCIe bytes sent since the driver loaded"},
  {Metric::PcieRxBytes, "pcie_rx_bytes", "B", MetricKind::Counter, MetricStorage::Integer,
   "nvmlDeviceGetFieldValues(198)", "PCIe bytes received since the driver loaded"},
  {Metric::GraphicsActivePct, "graphics_active_pct", "%", MetricKind::Gauge, MetricStorage::Real,
   "GPM 1 GRAPHICS_UTIL", "share of time the graphics engine was active (DCGM GR_ENGINE_ACTIVE)"},
  {Metric::SmActivePct, "sm_active_pct", "%", MetricKind::Gauge, MetricStorage::Real,
   "GPM 2 SM_UTIL", "share of SMs with at least one warp resident, over time (DCGM SM_ACTIVE)"},
  {Metric::SmOccupancyPct, "sm_occupancy_pct", "%", MetricKind::Gauge, MetricStorage::Real,
   "GPM 3 SM_OCCUPANCY", "resident warps relative to the maximum (DCGM SM_OCCUPANCY)"},
  {Metric::TensorActivePct, "tensor_active_pct", "%", MetricKind::Gauge, MetricStorage::Real,
   "GPM 5 ANY_TENSOR_UTIL", "tensor pipe activity, any precision (DCGM PIPE_TENSOR_ACTIVE)"},
  {Metric::DfmaTensorActivePct, "dfma_tensor_active_pct", "%", MetricKind::Gauge,
   MetricStorage::Real, "GPM 6 DFMA_TENSOR_UTIL", "FP64 tensor pipe activity"},
  {Metric::HmmaTensorActivePct, "hmma_tensor_active_pct", "%", MetricKind::Gauge,
   MetricStorage::Real, "GPM 7 HMMA_TENSOR_UTIL", "half-precision tensor pipe activity"},
  {Metric::ImmaTensorActivePct, "imma_tensor_active_pct", "%", MetricKind::Gauge,
   MetricStorage::Real, "GPM 9 IMMA_TENSOR_UTIL", "integer tensor pipe activity"},
  {Metric::DramActivePct, "dram_active_pct", "%", MetricKind::Gauge, MetricStorage::Real,
   "GPM 10 DRAM_BW_UTIL", "memory bandwidth used relative to peak (DCGM DRAM_ACTIVE)"},
  {Metric::Fp64ActivePct, "fp64_active_pct", "%", MetricKind::Gauge, MetricStorage::Real,
   "GPM 11 FP64_UTIL", "FP64 pipe activity (DCGM PIPE_FP64_ACTIVE)"},
  {Metric::Fp32ActivePct, "fp32_active_pct", "%", MetricKind::Gauge, MetricStorage::Real,
   "GPM 12 FP32_UTIL", "FP32 pipe activity (DCGM PIPE_FP32_ACTIVE)"},
  {Metric::Fp16ActivePct, "fp16_active_pct", "%", MetricKind::Gauge, MetricStorage::Real,
   "GPM 13 FP16_UTIL", "FP16 pipe activity (DCGM PIPE_FP16_ACTIVE)"},
  {Metric::IntegerActivePct, "integer_active_pct", "%", MetricKind::Gauge, MetricStorage::Real,
   "GPM 4 INTEGER_UTIL", "integer pipe activity"},
  {Metric::PcieTxBytesPerS, "pcie_tx_bytes_per_s", "B/s", MetricKind::Gauge, MetricStorage::Real,
   "GPM 20 PCIE_TX_PER_SEC", "PCIe transmit throughput"},
  {Metric::PcieRxBytesPerS, "pcie_rx_bytes_per_s", "B/s", MetricKind::Gauge, MetricStorage::Real,
   "GPM 21 PCIE_RX_PER_SEC", "PCIe receive throughput"},
  {Metric::NvlinkTxBytesPerS, "nvlink_tx_bytes_per_s", "B/s", MetricKind::Gauge,
   MetricStorage::Real, "GPM 61 NVLINK_TOTAL_TX_PER_SEC", "NVLink transmit throughput, all links"},
  {Metric::NvlinkRxBytesPerS, "nvlink_rx_bytes_per_s", "B/s", MetricKind::Gauge,
   MetricStorage::Real, "GPM 60 NVLINK_TOTAL_RX_PER_SEC", "NVLink receive throughput, all links"},
  {Metric::UmcActivityPct, "umc_activity_pct", "%", MetricKind::Gauge, MetricStorage::Real,
   "AMD SMI amdsmi_get_gpu_activity (umc_activity); ROCm SMI rsmi_dev_memory_busy_percent_get",
   "AMD: share of time the memory controllers (UMC) were busy"},
  {Metric::MmActivityPct, "mm_activity_pct", "%", MetricKind::Gauge, MetricStorage::Real,
   "AMD SMI amdsmi_get_gpu_activity (mm_activity)",
   "AMD: multimedia engine (VCN: video decode and encode) activity"},
  {Metric::XgmiReadBytes, "xgmi_read_bytes", "B", MetricKind::Counter, MetricStorage::Integer,
   "AMD SMI amdsmi_get_gpu_metrics_info (xgmi_read_data_acc)",
   "AMD: bytes read over XGMI, summed over the links, since the driver loaded; use differences"},
  {Metric::XgmiWriteBytes, "xgmi_write_bytes", "B", MetricKind::Counter, MetricStorage::Integer,
   "AMD SMI amdsmi_get_gpu_metrics_info (xgmi_write_data_acc)",
   "AMD: bytes written over XGMI, summed over the links, since the driver loaded; use differences"},
  {Metric::AmdThrottleStatus, "amd_throttle_status", "bitmask", MetricKind::Bitmask,
   MetricStorage::Integer, "AMD SMI amdsmi_get_gpu_metrics_info (indep_throttle_status)",
   "AMD: why clocks are held down (the driver's ASIC-independent throttler bits; docs/amd.md)"},
  {Metric::FlopActivePct, "flop_active_pct", "%", MetricKind::Gauge, MetricStorage::Real,
   "derived: fp64 + fp32 + fp16 + tensor active",
   "FLOP activity: FP64, FP32, FP16 and tensor pipe activity summed (gssr's total_flop_activity)"},
}};
// clang-format on

// The catalog is indexed by Metric: an entry out of place would silently mislabel a column.
consteval bool catalog_in_order() {
  for (std::size_t i = 0; i < kMetrics.size(); ++i) {
    if (static_cast<std::size_t>(kMetrics[i].id) != i) return false;
  }
  return true;
}
static_assert(catalog_in_order(), "kMetrics must list metrics in enum order");

constexpr const MetricInfo& info(Metric metric) {
  return kMetrics[static_cast<std::size_t>(metric)];
}

// Whether the metric is one only AMD GPUs give (docs/amd.md).
constexpr bool amd_only(Metric metric) {
  return metric >= Metric::UmcActivityPct && metric <= Metric::AmdThrottleStatus;
}

// What a metric is called for people, where that depends on the vendor: an AMD GPU's
// gpu_util_pct column holds its graphics activity (docs/amd.md), not NVIDIA's share of time a
// kernel ran. An entry with an empty vendor is the metric's name on any other GPU.
struct MetricMeaning {
  Metric metric;
  std::optional<Vendor> vendor;  // nullopt: any other vendor
  std::string_view name;         // in a sentence's middle: "graphics activity"
  std::string_view label;        // on a plot's axis: "graphics activity (AMD)"
};
inline constexpr MetricMeaning kMetricMeanings[] = {
    {Metric::GpuUtilPct, std::nullopt, "GPU utilization", "GPU utilization"},
    {Metric::GpuUtilPct, Vendor::Amd, "graphics activity", "graphics activity (AMD)"},
};

// The metric's meaning on GPUs of `vendor` (nullopt: GPUs of several vendors), else its meaning on
// any GPU; nullptr when the catalog gives it none.
const MetricMeaning* metric_meaning(Metric metric, std::optional<Vendor> vendor);

// The stored part of the catalog (kMetrics without the derived metrics).
inline constexpr std::span<const MetricInfo> stored_metrics() {
  return std::span<const MetricInfo>(kMetrics.data(), kStoredMetricCount);
}

// The metric named `name`, if any: its catalog name, or gssr's name where that is unambiguous
// (sm_active, tensor_active, flop_active, gpu_utilization, fb_used, ...; docs/gssr.md).
std::optional<Metric> metric_by_name(std::string_view name);

}  // namespace gpuscope
