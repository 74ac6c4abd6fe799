#include "exporter/metric_names.hpp"

#include <fmt/format.h>

#include <array>
#include <string_view>
#include <utility>

namespace gpuscope::exporter {
namespace {

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Catalog names carry their unit as a suffix (`power_w`, `sm_active_pct`); Prometheus wants
// base units spelled out (`_watts`, `_ratio`), and `_total` on counters.
ExportedMetric gpuscope_name(const MetricInfo& m) {
  struct Rule {
    std::string_view suffix;
    std::string_view replacement;
    double scale;
    std::string_view unit_words;
  };
  static constexpr std::array<Rule, 6> kRules = {{
      {"_bytes_per_s", "_bytes_per_second", 1, "bytes per second"},
      {"_pct", "_ratio", 0.01, "ratio 0-1"},
      {"_mhz", "_hertz", 1e6, "Hz"},
      {"_mj", "_joules", 1e-3, "J"},
      {"_w", "_watts", 1, "W"},
      {"_c", "_celsius", 1, "degrees Celsius"},
  }};
  std::string name(m.name);
  double scale = 1;
  std::string_view unit = m.unit;
  for (const Rule& rule : kRules) {
    if (ends_with(m.name, rule.suffix)) {
      name = std::string(m.name.substr(0, m.name.size() - rule.suffix.size())) +
             std::string(rule.replacement);
      scale = rule.scale;
      unit = rule.unit_words;
      break;
    }
  }
  if (m.unit == "B") unit = "bytes";
  // FLOP activity sums four pipes' ratios: up to 4, and computed, not read (docs/analysis.md).
  const bool derived = m.id == Metric::FlopActivePct;
  if (derived) unit = "ratio of one pipe's time, summed over four pipes: 0-4";
  const bool counter = m.kind == MetricKind::Counter;
  if (counter) name += "_total";
  // The AMD metrics' sources name their library themselves.
  const bool nvml = !derived && !amd_only(m.id);
  return {"gpuscope_" + name, counter ? "counter" : "gauge",
          fmt::format("{} ({}; {}{})", m.description, unit, nvml ? "NVML " : "", m.source), scale};
}

struct ForeignName {
  Metric metric;
  std::string_view name;
  std::string_view type;
  std::string_view help;
  double scale;
};

constexpr double kPerMib = 1.0 / (1024.0 * 1024.0);

// dcgm-exporter's field names, types, help texts and units (MiB for framebuffer, % for the
// utilisation rates, ratios for the profiling fields).
// clang-format off
constexpr std::array<ForeignName, 27> kDcgmNames = {{
  {Metric::PowerW, "DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", 1},
  {Metric::PowerInstantW, "DCGM_FI_DEV_POWER_USAGE_INSTANT", "gauge", "Current instantaneous power usage (in W).", 1},
  {Metric::EnergyMj, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ).", 1},
  {Metric::PowerLimitW, "DCGM_FI_DEV_ENFORCED_POWER_LIMIT", "gauge", "Enforced power limit (in W).", 1},
  {Metric::GpuUtilPct, "DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", 1},
  {Metric::MemUtilPct, "DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).", 1},
  {Metric::SmClockMhz, "DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", 1},
  {Metric::MemClockMhz, "DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", 1},
  {Metric::TemperatureC, "DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", 1},
  {Metric::MemoryTemperatureC, "DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).", 1},
  {Metric::MemoryUsedBytes, "DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", kPerMib},
  {Metric::MemoryFreeBytes, "DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", kPerMib},
  {Metric::MemoryReservedBytes, "DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB).", kPerMib},
  {Metric::ClockEventReasons, "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "gauge", "Current clock throttle reasons (bitmask).", 1},
  {Metric::GraphicsActivePct, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active.", 0.01},
  {Metric::SmActivePct, "DCGM_FI_PROF_SM_ACTIVE", "gauge", "The ratio of cycles an SM has at least 1 warp assigned.", 0.01},
  {Metric::SmOccupancyPct, "DCGM_FI_PROF_SM_OCCUPANCY", "gauge", "The ratio of number of warps resident on an SM.", 0.01},
  {Metric::TensorActivePct, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active.", 0.01},
  {Metric::DfmaTensorActivePct, "DCGM_FI_PROF_PIPE_TENSOR_DFMA_ACTIVE", "gauge", "Ratio of cycles the FP64 tensor (DFMA) pipe is active.", 0.01},
  {Metric::HmmaTensorActivePct, "DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE", "gauge", "Ratio of cycles the HMMA tensor pipe is active.", 0.01},
  {Metric::ImmaTensorActivePct, "DCGM_FI_PROF_PIPE_TENSOR_IMMA_ACTIVE", "gauge", "Ratio of cycles the IMMA tensor pipe is active.", 0.01},
  {Metric::DramActivePct, "DCGM_FI_PROF_DRAM_ACTIVE", "gauge", "Ratio of cycles the device memory interface is active sending or receiving data.", 0.01},
  {Metric::Fp64ActivePct, "DCGM_FI_PROF_PIPE_FP64_ACTIVE", "gauge", "Ratio of cycles the fp64 pipes are active.", 0.01},
  {Metric::Fp32ActivePct, "DCGM_FI_PROF_PIPE_FP32_ACTIVE", "gauge", "Ratio of cycles the fp32 pipes are active.", 0.01},
  {Metric::Fp16ActivePct, "DCGM_FI_PROF_PIPE_FP16_ACTIVE", "gauge", "Ratio of cycles the fp16 pipes are active.", 0.01},
  {Metric::PcieTxBytesPerS, "DCGM_FI_PROF_PCIE_TX_BYTES", "gauge", "The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in bytes per second.", 1},
  {Metric::PcieRxBytesPerS, "DCGM_FI_PROF_PCIE_RX_BYTES", "gauge", "The rate of data received over the PCIe bus - including both protocol headers and data payloads - in bytes per second.", 1},
}};
// clang-format on

// AMD's Device Metrics Exporter (github.com/ROCm/device-metrics-exporter,
// pkg/amdgpu/gpuagent/gpuagent_gpu_metrics.go and docs/configuration/metricslist.md): its names,
// help texts and units, all gauges: percent, W, µJ, °C, VRAM in MB (taken as MiB). Its clock
// (`gpu_clock{clock_index, clock_type}`) and per-link XGMI series have no one-to-one column here.
// clang-format off
constexpr std::array<ForeignName, 9> kAmdNames = {{
  {Metric::PowerW, "gpu_power_usage", "gauge", "GPU Power usage in Watts", 1},
  {Metric::EnergyMj, "gpu_energy_consumed", "gauge", "Accumulated energy consumed by the GPU in uJ", 1000},
  {Metric::GpuUtilPct, "gpu_gfx_activity", "gauge", "Graphics engine usage in Percentage (0-100)", 1},
  {Metric::UmcActivityPct, "gpu_umc_activity", "gauge", "Memory engine usage in Percentage (0-100)", 1},
  {Metric::MmActivityPct, "gpu_mma_activity", "gauge", "Average MultiMedia (MM) engine usage in Percentage (0-100)", 1},
  {Metric::TemperatureC, "gpu_junction_temperature", "gauge", "Current junction/hotspot temperature in Celsius", 1},
  {Metric::MemoryTemperatureC, "gpu_memory_temperature", "gauge", "Current memory temperature in Celsius", 1},
  {Metric::MemoryUsedBytes, "gpu_used_vram", "gauge", "Used VRAM memory of the GPU (in MB)", kPerMib},
  {Metric::MemoryFreeBytes, "gpu_free_vram", "gauge", "Free VRAM memory of the GPU (in MB)", kPerMib},
}};
// clang-format on

struct JobstatsName {
  Metric metric;
  std::string_view name;
  std::string_view help;
  double scale;
  std::string_view clock_type;  // nvidia_gpu_clock's type label
};

// Princeton jobstats' GPU exporter (github.com/plazonic/nvidia_gpu_prometheus_exporter, main.go):
// its names and help texts, and its units: duty cycle in % (NVML's utilization rate), power in
// mW, clocks in MHz with a type label, the GPM fields as 0-1 ratios despite their `_percent`
// names (it divides NVML's percentages by 100), PCIe and NVLink in bytes per second. Its other
// series (num_devices, memory_total_bytes, jobId, jobUid) are not catalog metrics.
// clang-format off
constexpr std::array<JobstatsName, 21> kJobstatsNames = {{
  {Metric::GpuUtilPct, "nvidia_gpu_duty_cycle", "Percent of time over the past sample period during which one or more kernels were executing on the GPU device", 1, ""},
  {Metric::MemoryUsedBytes, "nvidia_gpu_memory_used_bytes", "Memory used by the GPU device in bytes", 1, ""},
  {Metric::PowerW, "nvidia_gpu_power_usage_milliwatts", "Power usage of the GPU device in milliwatts", 1000, ""},
  {Metric::TemperatureC, "nvidia_gpu_temperature_celsius", "Temperature of the GPU device in celsius", 1, ""},
  {Metric::GraphicsClockMhz, "nvidia_gpu_clock", "Clock speed", 1, "graphics"},
  {Metric::SmClockMhz, "nvidia_gpu_clock", "Clock speed", 1, "sm"},
  {Metric::MemClockMhz, "nvidia_gpu_clock", "Clock speed", 1, "mem"},
  {Metric::ClockEventReasons, "nvidia_gpu_clock_event_reason", "Bitmask of active clocks event reasons, check NvmlClocksEventReasons", 1, ""},
  {Metric::GraphicsActivePct, "nvidia_gpu_graphics_util_percent", "Percentage of time any compute/graphics app was active on the GPU", 0.01, ""},
  {Metric::SmActivePct, "nvidia_gpu_sm_util_percent", "Percentage of SMs that were busy", 0.01, ""},
  {Metric::SmOccupancyPct, "nvidia_gpu_sm_occupancy_percent", "Percentage of warps that were active vs theoretical maximum", 0.01, ""},
  {Metric::IntegerActivePct, "nvidia_gpu_integer_util", "Percentage of time the GPU's SMs were doing integer operations", 0.01, ""},
  {Metric::TensorActivePct, "nvidia_gpu_any_tensor_util_percent", "Percentage of time the GPU's SMs were doing ANY tensor operations", 0.01, ""},
  {Metric::DramActivePct, "nvidia_gpu_dram_bw_util_percent", "Percentage of DRAM bw used vs theoretical maximum", 0.01, ""},
  {Metric::Fp64ActivePct, "nvidia_gpu_fp64_util_percent", "Percentage of time the GPU's SMs were doing non-tensor FP64 math", 0.01, ""},
  {Metric::Fp32ActivePct, "nvidia_gpu_fp32_util_percent", "Percentage of time the GPU's SMs were doing non-tensor FP32 math", 0.01, ""},
  {Metric::Fp16ActivePct, "nvidia_gpu_fp16_util_percent", "Percentage of time the GPU's SMs were doing non-tensor FP16 math", 0.01, ""},
  {Metric::PcieTxBytesPerS, "nvidia_gpu_pcie_tx_per_sec", "PCIe traffic from this GPU in bytes/sec", 1, ""},
  {Metric::PcieRxBytesPerS, "nvidia_gpu_pcie_rx_per_sec", "PCIe traffic to this GPU in bytes/sec", 1, ""},
  {Metric::NvlinkRxBytesPerS, "nvidia_gpu_nvlink_total_rx_per_sec", "NvLink read bandwidth for all links in bytes/sec", 1, ""},
  {Metric::NvlinkTxBytesPerS, "nvidia_gpu_nvlink_total_tx_per_sec", "NvLink write bandwidth for all links in bytes/sec", 1, ""},
}};
// clang-format on

std::optional<ExportedMetric> jobstats_name(Metric metric) {
  for (const JobstatsName& j : kJobstatsNames) {
    if (j.metric != metric) continue;
    ExportedMetric out{std::string(j.name), "gauge", std::string(j.help), j.scale};
    if (!j.clock_type.empty()) {
      out.label_name = "type";
      out.label_value = j.clock_type;
    }
    // NVML gives milliwatts as an integer; the catalog's watts are that over 1000.
    out.whole = metric == Metric::PowerW;
    return out;
  }
  return std::nullopt;
}

using M = HealthMetric;

// gpuscope's health families (docs/live.md, "GPU health"): `gpuscope_gpu_<what>`, base
// units, `_total` on counters, siblings told apart by labels.
// clang-format off
constexpr HealthSeries kEccEnabled[] = {{M::EccEnabled}};
constexpr HealthSeries kEccErrors[] = {
  {M::EccCorrectedVolatile, {{{"type", "corrected"}, {"counter", "volatile"}}}},
  {M::EccUncorrectedVolatile, {{{"type", "uncorrected"}, {"counter", "volatile"}}}},
  {M::EccCorrectedAggregate, {{{"type", "corrected"}, {"counter", "aggregate"}}}},
  {M::EccUncorrectedAggregate, {{{"type", "uncorrected"}, {"counter", "aggregate"}}}},
};
constexpr HealthSeries kRemappedRows[] = {
  {M::RemappedRowsCorrectable, {{{"type", "correctable"}}}},
  {M::RemappedRowsUncorrectable, {{{"type", "uncorrectable"}}}},
};
constexpr HealthSeries kRemapPending[] = {{M::RowRemapPending}};
constexpr HealthSeries kRemapFailure[] = {{M::RowRemapFailure}};
constexpr HealthSeries kRetiredPages[] = {
  {M::RetiredPagesSbe, {{{"cause", "sbe"}}}},
  {M::RetiredPagesDbe, {{{"cause", "dbe"}}}},
};
constexpr HealthSeries kRetiredPending[] = {{M::RetiredPagesPending}};
constexpr HealthSeries kPcieReplays[] = {{M::PcieReplays}};
constexpr HealthSeries kEncoder[] = {{M::EncoderUtilPct}};
constexpr HealthSeries kDecoder[] = {{M::DecoderUtilPct}};
constexpr HealthSeries kViolations[] = {
  {M::ViolationPowerNs, {{{"reason", "power"}}}},
  {M::ViolationThermalNs, {{{"reason", "thermal"}}}},
  {M::ViolationSyncBoostNs, {{{"reason", "sync_boost"}}}},
  {M::ViolationBoardLimitNs, {{{"reason", "board_limit"}}}},
  {M::ViolationLowUtilNs, {{{"reason", "low_util"}}}},
  {M::ViolationReliabilityNs, {{{"reason", "reliability"}}}},
  {M::ViolationAppClocksNs, {{{"reason", "app_clocks"}}}},
  {M::ViolationBaseClocksNs, {{{"reason", "base_clocks"}}}},
  {M::ViolationSwThermalNs, {{{"reason", "sw_thermal"}}}},
  {M::ViolationHwThermalNs, {{{"reason", "hw_thermal"}}}},
  {M::ViolationPowerBrakeNs, {{{"reason", "power_brake"}}}},
};
constexpr HealthSeries kNvlinkErrors[] = {
  {M::NvlinkCrcFlitErrors, {{{"type", "crc_flit"}}}},
  {M::NvlinkCrcDataErrors, {{{"type", "crc_data"}}}},
  {M::NvlinkReplayErrors, {{{"type", "replay"}}}},
  {M::NvlinkRecoveryErrors, {{{"type", "recovery"}}}},
};
constexpr HealthSeries kNvlinkData[] = {
  {M::NvlinkTxKib, {{{"direction", "tx"}}}},
  {M::NvlinkRxKib, {{{"direction", "rx"}}}},
};

constexpr std::array kGpuscopeHealth = {
  HealthFamily{"gpuscope_gpu_xid_last", "gauge", "The last Xid error the driver reported on the GPU, 0 before any (the Xid number, docs/health.md; NVML Xid events).", HealthSource::XidLast},
  HealthFamily{"gpuscope_gpu_xid_errors_total", "counter", "Xid errors the driver reported on the GPU since gpuscope started (count; NVML Xid events).", HealthSource::XidCount},
  HealthFamily{"gpuscope_gpu_ecc_enabled", "gauge", "ECC is on: 1, off: 0 (NVML nvmlDeviceGetEccMode).", HealthSource::Row, 1, kEccEnabled},
  HealthFamily{"gpuscope_gpu_ecc_errors_total", "counter", "ECC errors: corrected (single-bit) or uncorrected (double-bit), since the driver loaded (volatile) or over the GPU's life (aggregate) (count; NVML nvmlDeviceGetTotalEccErrors).", HealthSource::Row, 1, kEccErrors},
  HealthFamily{"gpuscope_gpu_remapped_rows_total", "counter", "Memory rows remapped after correctable or uncorrectable errors (rows; NVML nvmlDeviceGetRemappedRows).", HealthSource::Row, 1, kRemappedRows},
  HealthFamily{"gpuscope_gpu_row_remap_pending", "gauge", "A row remap waits for the next GPU reset: 1, else 0 (NVML nvmlDeviceGetRemappedRows).", HealthSource::Row, 1, kRemapPending},
  HealthFamily{"gpuscope_gpu_row_remap_failure", "gauge", "A row remap failed, no spare row was left: 1, else 0 (NVML nvmlDeviceGetRemappedRows).", HealthSource::Row, 1, kRemapFailure},
  HealthFamily{"gpuscope_gpu_retired_pages_total", "counter", "Memory pages retired after repeated single-bit (sbe) or a double-bit (dbe) ECC error, before Ampere (pages; NVML nvmlDeviceGetRetiredPages).", HealthSource::Row, 1, kRetiredPages},
  HealthFamily{"gpuscope_gpu_retired_pages_pending", "gauge", "A page retirement waits for the next reboot: 1, else 0 (NVML field 31).", HealthSource::Row, 1, kRetiredPending},
  HealthFamily{"gpuscope_gpu_pcie_replays_total", "counter", "PCIe transfers the link had to replay (count; NVML nvmlDeviceGetPcieReplayCounter).", HealthSource::Row, 1, kPcieReplays},
  HealthFamily{"gpuscope_gpu_encoder_util_ratio", "gauge", "Video encoder (NVENC) busy (ratio 0-1; NVML nvmlDeviceGetEncoderUtilization).", HealthSource::Row, 0.01, kEncoder},
  HealthFamily{"gpuscope_gpu_decoder_util_ratio", "gauge", "Video decoder (NVDEC) busy (ratio 0-1; NVML nvmlDeviceGetDecoderUtilization).", HealthSource::Row, 0.01, kDecoder},
  HealthFamily{"gpuscope_gpu_violation_seconds_total", "counter", "Time the clocks were held down, by reason (s; NVML fields 74-81 and 269-271).", HealthSource::Row, 1e-9, kViolations},
  HealthFamily{"gpuscope_gpu_nvlink_errors_total", "counter", "NVLink errors summed over the links, by type (count; NVML fields 38, 45, 52 and 59).", HealthSource::Row, 1, kNvlinkErrors},
  HealthFamily{"gpuscope_gpu_nvlink_data_bytes_total", "counter", "NVLink data sent (tx) and received (rx) over all links, without protocol overhead (bytes; NVML fields 138 and 139).", HealthSource::Row, 1024, kNvlinkData},
};

// dcgm-exporter's names for the same values: the families of its default counters file
// (etc/default-counters.csv) with their types and help texts, those it has commented out there
// that gpuscope has the data for, and DCGM's ROW_REMAP_PENDING (field 396). Units are DCGM's:
// %, ns, counts; NVLINK_BANDWIDTH_TOTAL is DCGM's rate although declared a counter.
constexpr HealthSeries kDcgmPowerViolation[] = {{M::ViolationPowerNs}};
constexpr HealthSeries kDcgmThermalViolation[] = {{M::ViolationThermalNs}};
constexpr HealthSeries kDcgmSyncBoostViolation[] = {{M::ViolationSyncBoostNs}};
constexpr HealthSeries kDcgmBoardLimitViolation[] = {{M::ViolationBoardLimitNs}};
constexpr HealthSeries kDcgmLowUtilViolation[] = {{M::ViolationLowUtilNs}};
constexpr HealthSeries kDcgmReliabilityViolation[] = {{M::ViolationReliabilityNs}};
constexpr HealthSeries kDcgmSbeVolatile[] = {{M::EccCorrectedVolatile}};
constexpr HealthSeries kDcgmDbeVolatile[] = {{M::EccUncorrectedVolatile}};
constexpr HealthSeries kDcgmSbeAggregate[] = {{M::EccCorrectedAggregate}};
constexpr HealthSeries kDcgmDbeAggregate[] = {{M::EccUncorrectedAggregate}};
constexpr HealthSeries kDcgmRetiredSbe[] = {{M::RetiredPagesSbe}};
constexpr HealthSeries kDcgmRetiredDbe[] = {{M::RetiredPagesDbe}};
constexpr HealthSeries kDcgmCrcFlit[] = {{M::NvlinkCrcFlitErrors}};
constexpr HealthSeries kDcgmCrcData[] = {{M::NvlinkCrcDataErrors}};
constexpr HealthSeries kDcgmReplay[] = {{M::NvlinkReplayErrors}};
constexpr HealthSeries kDcgmRecovery[] = {{M::NvlinkRecoveryErrors}};
constexpr HealthSeries kDcgmRowsUncorrectable[] = {{M::RemappedRowsUncorrectable}};
constexpr HealthSeries kDcgmRowsCorrectable[] = {{M::RemappedRowsCorrectable}};

constexpr std::array kDcgmHealth = {
  HealthFamily{"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries.", HealthSource::Row, 1, kPcieReplays},
  HealthFamily{"DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %).", HealthSource::Row, 1, kEncoder},
  HealthFamily{"DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %).", HealthSource::Row, 1, kDecoder},
  HealthFamily{"DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.", HealthSource::XidLast},
  HealthFamily{"DCGM_FI_DEV_POWER_VIOLATION", "counter", "Throttling duration due to power constraints (in ns).", HealthSource::Row, 1, kDcgmPowerViolation},
  HealthFamily{"DCGM_FI_DEV_THERMAL_VIOLATION", "counter", "Throttling duration due to thermal constraints (in ns).", HealthSource::Row, 1, kDcgmThermalViolation},
  HealthFamily{"DCGM_FI_DEV_SYNC_BOOST_VIOLATION", "counter", "Throttling duration due to sync-boost constraints (in ns).", HealthSource::Row, 1, kDcgmSyncBoostViolation},
  HealthFamily{"DCGM_FI_DEV_BOARD_LIMIT_VIOLATION", "counter", "Throttling duration due to board limit constraints (in ns).", HealthSource::Row, 1, kDcgmBoardLimitViolation},
  HealthFamily{"DCGM_FI_DEV_LOW_UTIL_VIOLATION", "counter", "Throttling duration due to low utilization (in ns).", HealthSource::Row, 1, kDcgmLowUtilViolation},
  HealthFamily{"DCGM_FI_DEV_RELIABILITY_VIOLATION", "counter", "Throttling duration due to reliability constraints (in ns).", HealthSource::Row, 1, kDcgmReliabilityViolation},
  HealthFamily{"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors.", HealthSource::Row, 1, kDcgmSbeVolatile},
  HealthFamily{"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors.", HealthSource::Row, 1, kDcgmDbeVolatile},
  HealthFamily{"DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "counter", "Total number of single-bit persistent ECC errors.", HealthSource::Row, 1, kDcgmSbeAggregate},
  HealthFamily{"DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "counter", "Total number of double-bit persistent ECC errors.", HealthSource::Row, 1, kDcgmDbeAggregate},
  HealthFamily{"DCGM_FI_DEV_RETIRED_SBE", "counter", "Total number of retired pages due to single-bit errors.", HealthSource::Row, 1, kDcgmRetiredSbe},
  HealthFamily{"DCGM_FI_DEV_RETIRED_DBE", "counter", "Total number of retired pages due to double-bit errors.", HealthSource::Row, 1, kDcgmRetiredDbe},
  HealthFamily{"DCGM_FI_DEV_RETIRED_PENDING", "counter", "Total number of pages pending retirement.", HealthSource::Row, 1, kRetiredPending},
  HealthFamily{"DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink flow-control CRC errors.", HealthSource::Row, 1, kDcgmCrcFlit},
  HealthFamily{"DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink data CRC errors.", HealthSource::Row, 1, kDcgmCrcData},
  HealthFamily{"DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink retries.", HealthSource::Row, 1, kDcgmReplay},
  HealthFamily{"DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink recovery errors.", HealthSource::Row, 1, kDcgmRecovery},
  HealthFamily{"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter", "Total number of NVLink bandwidth counters for all lanes.", HealthSource::NvlinkRate, 1e-3},
  HealthFamily{"DCGM_FI_DEV_VGPU_LICENSE_STATUS", "gauge", "vGPU License status", HealthSource::VgpuLicense},
  HealthFamily{"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for uncorrectable errors", HealthSource::Row, 1, kDcgmRowsUncorrectable},
  HealthFamily{"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors", HealthSource::Row, 1, kDcgmRowsCorrectable},
  HealthFamily{"DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed", HealthSource::Row, 1, kRemapFailure},
  HealthFamily{"DCGM_FI_DEV_ROW_REMAP_PENDING", "gauge", "Whether remapping of rows is pending (it takes effect at the next GPU reset)", HealthSource::Row, 1, kRemapPending},
};
// clang-format on

}  // namespace

std::optional<ExportedMetric> exported_metric(Metric metric, Naming naming) {
  if (naming == Naming::Gpuscope) return gpuscope_name(info(metric));
  if (naming == Naming::Jobstats) return jobstats_name(metric);
  if (naming == Naming::Amd) {
    for (const ForeignName& a : kAmdNames) {
      if (a.metric == metric)
        return ExportedMetric{std::string(a.name), a.type, std::string(a.help), a.scale};
    }
    return std::nullopt;
  }
  for (const ForeignName& d : kDcgmNames) {
    if (d.metric == metric)
      return ExportedMetric{std::string(d.name), d.type, std::string(d.help), d.scale};
  }
  if (metric == Metric::NvlinkTxBytesPerS || metric == Metric::NvlinkRxBytesPerS) {
    const bool tx = metric == Metric::NvlinkTxBytesPerS;
    return ExportedMetric{tx ? "DCGM_FI_PROF_NVLINK_TX_BYTES" : "DCGM_FI_PROF_NVLINK_RX_BYTES",
                          "gauge",
                          tx ? "The rate of data transmitted over NVLink, not including protocol "
                               "headers, in bytes per second."
                             : "The rate of data received over NVLink, not including protocol "
                               "headers, in bytes per second.",
                          1};
  }
  return std::nullopt;
}

std::span<const HealthFamily> health_families(Naming naming) {
  if (naming == Naming::Gpuscope) return kGpuscopeHealth;
  if (naming == Naming::Dcgm) return kDcgmHealth;
  return {};
}

std::optional<Naming> naming_from_text(std::string_view text) {
  // The words of --metric-names, each beside the naming it stands for.
  static constexpr std::pair<std::string_view, Naming> kWords[] = {
      {"gpuscope", Naming::Gpuscope},
      {"dcgm", Naming::Dcgm},
      {"jobstats", Naming::Jobstats},
      {"amd", Naming::Amd},
  };
  for (const auto& [word, naming] : kWords) {
    if (word == text) return naming;
  }
  return std::nullopt;
}

}  // namespace gpuscope::exporter
