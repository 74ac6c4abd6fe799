// The health catalog: the GPU's fault and wear counters, read at a slow cadence
// because they change rarely. Like the metric catalog (core/metrics.hpp) each entry names its
// column in the run database's health_samples table, its unit and its source; docs/health.md
// says what each one means and what gpuscope says about it. Xids are not here: they are events
// (EventKind::Xid), not counters.
#pragma once

#include <array>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace gpuscope {

// Index into kHealthMetrics; the order is the column order of the health_samples table.
enum class HealthMetric : std::size_t {
  EccEnabled,              // 1: ECC on now
  EccCorrectedVolatile,    // single-bit (corrected) errors since the driver loaded
  EccUncorrectedVolatile,  // double-bit (uncorrected) errors since the driver loaded
  EccCorrectedAggregate,   // over the GPU's life (inforom)
  EccUncorrectedAggregate,
  RemappedRowsCorrectable,  // rows remapped after correctable errors (Ampere and newer)
  RemappedRowsUncorrectable,
  RowRemapPending,  // 1: a remap waits for the next GPU reset
  RowRemapFailure,  // 1: a remap failed (no spare row left)
  RetiredPagesSbe,  // pages retired after multiple single-bit errors (before Ampere)
  RetiredPagesDbe,  // pages retired after a double-bit error
  RetiredPagesPending,
  PcieReplays,  // PCIe replay (retry) counter
  EncoderUtilPct,
  DecoderUtilPct,
  ViolationPowerNs,  // time the clocks were held down for power (nvml fields 74-81, 269-271)
  ViolationThermalNs,
  ViolationSyncBoostNs,
  ViolationBoardLimitNs,
  ViolationLowUtilNs,
  ViolationReliabilityNs,
  ViolationAppClocksNs,
  ViolationBaseClocksNs,
  ViolationSwThermalNs,
  ViolationHwThermalNs,
  ViolationPowerBrakeNs,
  NvlinkCrcFlitErrors,  // summed over the links
  NvlinkCrcDataErrors,
  NvlinkReplayErrors,
  NvlinkRecoveryErrors,
  NvlinkTxKib,  // data throughput, cumulative, all links
  NvlinkRxKib,
  Count
};

inline constexpr std::size_t kHealthMetricCount = static_cast<std::size_t>(HealthMetric::Count);

enum class HealthKind {
  Flag,     // 0 or 1
  Counter,  // grows; its change over the run is what matters
  Gauge,    // a level at the sample time
};

struct HealthMetricInfo {
  HealthMetric id;
  std::string_view name;  // health_samples column and JSON key
  std::string_view unit;  // "", "count", "rows", "pages", "%", "ns", "KiB"
  HealthKind kind;
  std::string_view source;  // the NVML call or field it comes from
  std::string_view description;
};

// clang-format off
inline constexpr std::array<HealthMetricInfo, kHealthMetricCount> kHealthMetrics = {{
  {HealthMetric::EccEnabled, "ecc_enabled", "", HealthKind::Flag, "nvmlDeviceGetEccMode", "ECC is on"},
  {HealthMetric::EccCorrectedVolatile, "ecc_corrected_volatile", "count", HealthKind::Counter, "nvmlDeviceGetTotalEccErrors", "corrected (single-bit) ECC errors since the driver loaded"},
  {HealthMetric::EccUncorrectedVolatile, "ecc_uncorrected_volatile", "count", HealthKind::Counter, "nvmlDeviceGetTotalEccErrors", "uncorrected (double-bit) ECC errors since the driver loaded"},
  {HealthMetric::EccCorrectedAggregate, "ecc_corrected_aggregate", "count", HealthKind::Counter, "nvmlDeviceGetTotalEccErrors", "corrected ECC errors over the GPU's life"},
  {HealthMetric::EccUncorrectedAggregate, "ecc_uncorrected_aggregate", "count", HealthKind::Counter, "nvmlDeviceGetTotalEccErrors", "uncorrected ECC errors over the GPU's life"},
  {HealthMetric::RemappedRowsCorrectable, "remapped_rows_correctable", "rows", HealthKind::Counter, "nvmlDeviceGetRemappedRows", "memory rows remapped after correctable errors"},
  {HealthMetric::RemappedRowsUncorrectable, "remapped_rows_uncorrectable", "rows", HealthKind::Counter, "nvmlDeviceGetRemappedRows", "memory rows remapped after uncorrectable errors"},
  {HealthMetric::RowRemapPending, "row_remap_pending", "", HealthKind::Flag, "nvmlDeviceGetRemappedRows", "a row remap waits for the next GPU reset"},
  {HealthMetric::RowRemapFailure, "row_remap_failure", "", HealthKind::Flag, "nvmlDeviceGetRemappedRows", "a row remap failed: no spare row was left"},
  {HealthMetric::RetiredPagesSbe, "retired_pages_sbe", "pages", HealthKind::Counter, "nvmlDeviceGetRetiredPages", "pages retired after repeated single-bit errors"},
  {HealthMetric::RetiredPagesDbe, "retired_pages_dbe", "pages", HealthKind::Counter, "nvmlDeviceGetRetiredPages", "pages retired after a double-bit error"},
  {HealthMetric::RetiredPagesPending, "retired_pages_pending", "", HealthKind::Flag, "field 31 (NVML_FI_DEV_RETIRED_PENDING)", "a page retirement waits for the next reboot"},
  {HealthMetric::PcieReplays, "pcie_replays", "count", HealthKind::Counter, "nvmlDeviceGetPcieReplayCounter", "PCIe transfers the link had to replay"},
  {HealthMetric::EncoderUtilPct, "encoder_util_pct", "%", HealthKind::Gauge, "nvmlDeviceGetEncoderUtilization", "video encoder (NVENC) busy"},
  {HealthMetric::DecoderUtilPct, "decoder_util_pct", "%", HealthKind::Gauge, "nvmlDeviceGetDecoderUtilization", "video decoder (NVDEC) busy"},
  {HealthMetric::ViolationPowerNs, "violation_power_ns", "ns", HealthKind::Counter, "field 74 (NVML_FI_DEV_PERF_POLICY_POWER)", "time the clocks were held down by the power cap"},
  {HealthMetric::ViolationThermalNs, "violation_thermal_ns", "ns", HealthKind::Counter, "field 75 (NVML_FI_DEV_PERF_POLICY_THERMAL)", "time the clocks were held down by temperature"},
  {HealthMetric::ViolationSyncBoostNs, "violation_sync_boost_ns", "ns", HealthKind::Counter, "field 76 (NVML_FI_DEV_PERF_POLICY_SYNC_BOOST)", "time the clocks were held down by sync boost"},
  {HealthMetric::ViolationBoardLimitNs, "violation_board_limit_ns", "ns", HealthKind::Counter, "field 77 (NVML_FI_DEV_PERF_POLICY_BOARD_LIMIT)", "time the clocks were held down by the board limit"},
  {HealthMetric::ViolationLowUtilNs, "violation_low_util_ns", "ns", HealthKind::Counter, "field 78 (NVML_FI_DEV_PERF_POLICY_LOW_UTILIZATION)", "time the clocks were lowered for low utilization"},
  {HealthMetric::ViolationReliabilityNs, "violation_reliability_ns", "ns", HealthKind::Counter, "field 79 (NVML_FI_DEV_PERF_POLICY_RELIABILITY)", "time the clocks were held down for board reliability"},
  {HealthMetric::ViolationAppClocksNs, "violation_app_clocks_ns", "ns", HealthKind::Counter, "field 80 (NVML_FI_DEV_PERF_POLICY_TOTAL_APP_CLOCKS)", "time below the application clocks"},
  {HealthMetric::ViolationBaseClocksNs, "violation_base_clocks_ns", "ns", HealthKind::Counter, "field 81 (NVML_FI_DEV_PERF_POLICY_TOTAL_BASE_CLOCKS)", "time below the base clocks"},
  {HealthMetric::ViolationSwThermalNs, "violation_sw_thermal_ns", "ns", HealthKind::Counter, "field 269 (NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN)", "time in software thermal slowdown"},
  {HealthMetric::ViolationHwThermalNs, "violation_hw_thermal_ns", "ns", HealthKind::Counter, "field 270 (NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN)", "time in hardware thermal slowdown"},
  {HealthMetric::ViolationPowerBrakeNs, "violation_power_brake_ns", "ns", HealthKind::Counter, "field 271 (NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN)", "time under the external power brake"},
  {HealthMetric::NvlinkCrcFlitErrors, "nvlink_crc_flit_errors", "count", HealthKind::Counter, "field 38 (NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL)", "NVLink flow-control CRC errors, all links"},
  {HealthMetric::NvlinkCrcDataErrors, "nvlink_crc_data_errors", "count", HealthKind::Counter, "field 45 (NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL)", "NVLink data CRC errors, all links"},
  {HealthMetric::NvlinkReplayErrors, "nvlink_replay_errors", "count", HealthKind::Counter, "field 52 (NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL)", "NVLink replays, all links"},
  {HealthMetric::NvlinkRecoveryErrors, "nvlink_recovery_errors", "count", HealthKind::Counter, "field 59 (NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL)", "NVLink link recoveries, all links"},
  {HealthMetric::NvlinkTxKib, "nvlink_tx_kib", "KiB", HealthKind::Counter, "field 138 (NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX), all links", "NVLink data sent"},
  {HealthMetric::NvlinkRxKib, "nvlink_rx_kib", "KiB", HealthKind::Counter, "field 139 (NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX), all links", "NVLink data received"},
}};
// clang-format on

constexpr const HealthMetricInfo& health_info(HealthMetric metric) {
  return kHealthMetrics[static_cast<std::size_t>(metric)];
}

// The entry named `name` (a health_samples column), if any.
constexpr std::optional<HealthMetric> health_metric_by_name(std::string_view name) {
  for (const auto& info : kHealthMetrics) {
    if (info.name == name) return info.id;
  }
  return std::nullopt;
}

// One GPU's health counters at one time. Every value is an integer the driver reported, held as
// a double like SampleRow's; a metric the GPU does not support is absent, never zero.
struct HealthRow {
  unsigned device_index = 0;  // NVML index
  std::int64_t wall_ns = 0;
  std::int64_t mono_ns = 0;
  std::array<double, kHealthMetricCount> values{};
  std::bitset<kHealthMetricCount> present;

  void set(HealthMetric metric, double value) {
    values[static_cast<std::size_t>(metric)] = value;
    present.set(static_cast<std::size_t>(metric));
  }
  std::optional<double> get(HealthMetric metric) const {
    const auto i = static_cast<std::size_t>(metric);
    return present.test(i) ? std::optional<double>(values[i]) : std::nullopt;
  }
};

}  // namespace gpuscope
