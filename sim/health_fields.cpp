// The health field ids of nvmlDeviceGetFieldValues: ECC, retired pages, remapped rows, PCIe
// replays, NVLink errors and throughput, and the violation times (docs/scenarios.md).
#include <cstdint>
#include <limits>

#include "sim/fields.hpp"
#include "sim/health.hpp"

namespace gpuscope::sim {
namespace {

// NVML_FI_DEV_* ids (nvml.h) that only the simulator answers so far: integer constants, as
// nvml/abi.hpp's kField* ids, compared with nvmlFieldValue_t::fieldId.
constexpr unsigned kEccCurrent = 1;
constexpr unsigned kEccPending = 2;
constexpr unsigned kEccSbeVolatileTotal = 3;
constexpr unsigned kEccDbeVolatileTotal = 4;
constexpr unsigned kEccSbeAggregateTotal = 5;
constexpr unsigned kEccDbeAggregateTotal = 6;
constexpr unsigned kRetiredSbe = 29;
constexpr unsigned kRetiredDbe = 30;
constexpr unsigned kRetiredPending = 31;
constexpr unsigned kNvlinkCrcFlitErrorsTotal = 38;
constexpr unsigned kNvlinkCrcDataErrorsTotal = 45;
constexpr unsigned kNvlinkReplayErrorsTotal = 52;
constexpr unsigned kNvlinkRecoveryErrorsTotal = 59;
constexpr unsigned kPcieReplayCounter = 94;
constexpr unsigned kPcieReplayRolloverCounter = 95;
constexpr unsigned kNvlinkThroughputDataTx = 138;
constexpr unsigned kNvlinkThroughputDataRx = 139;
constexpr unsigned kRemappedCorrectable = 142;
constexpr unsigned kRemappedUncorrectable = 143;
constexpr unsigned kRemappedPending = 144;
constexpr unsigned kRemappedFailure = 145;

// scopeId of the NVLink throughput fields for the sum over all links.
constexpr unsigned kAllLinks = std::numeric_limits<unsigned>::max();

void answer_ull(nvmlFieldValue_t& value, unsigned long long number) {
  value.valueType = nvml::kValueTypeUnsignedLongLong;
  value.value.ullVal = number;
  value.nvmlReturn = nvml::kSuccess;
}

void answer_uint(nvmlFieldValue_t& value, unsigned number) {
  value.valueType = nvml::kValueTypeUnsignedInt;
  value.value.uiVal = number;
  value.nvmlReturn = nvml::kSuccess;
}

bool fill_ecc(const GpuConfig& config, const HealthCounters& health, nvmlFieldValue_t& value) {
  if (value.fieldId < kEccCurrent || value.fieldId > kEccDbeAggregateTotal) return false;
  if (!config.spec.ecc) return true;
  const EccStart& start = config.ecc_aggregate_start;
  const unsigned long long numbers[] = {1,
                                        1,
                                        health.ecc_corrected,
                                        health.ecc_uncorrected,
                                        start.corrected + health.ecc_corrected,
                                        start.uncorrected + health.ecc_uncorrected};
  answer_ull(value, numbers[value.fieldId - kEccCurrent]);
  return true;
}

bool fill_retired(const GpuConfig& config, const HealthCounters& health, nvmlFieldValue_t& value) {
  if (value.fieldId < kRetiredSbe || value.fieldId > kRetiredPending) return false;
  if (!retired_pages_supported(config.spec)) return true;
  const unsigned long long numbers[] = {health.retired_sbe, health.retired_dbe,
                                        health.retired_pending ? 1ULL : 0ULL};
  answer_ull(value, numbers[value.fieldId - kRetiredSbe]);
  return true;
}

bool fill_remapped(const SimDevice& device, const HealthCounters& health, nvmlFieldValue_t& value) {
  if (value.fieldId < kRemappedCorrectable || value.fieldId > kRemappedFailure) return false;
  if (!remapped_rows_supported(device, false)) return true;
  const unsigned long long numbers[] = {health.remapped_correctable, health.remapped_uncorrectable,
                                        health.remap_pending ? 1ULL : 0ULL,
                                        health.remap_failure ? 1ULL : 0ULL};
  answer_ull(value, numbers[value.fieldId - kRemappedCorrectable]);
  return true;
}

// NVLink: NOT_SUPPORTED without it (a PCIe card); the error totals from the steps, whatever the
// scope; the data throughput in KiB, all links (scopeId UINT_MAX) or an even share per link.
bool fill_nvlink(const GpuModel& model, const HealthCounters& health, nvmlFieldValue_t& value) {
  const GpuSpec& spec = model.config().spec;
  unsigned long long number = 0;
  switch (value.fieldId) {
    case kNvlinkCrcFlitErrorsTotal:
      number = health.nvlink_crc_flit_errors;
      break;
    case kNvlinkCrcDataErrorsTotal:
      number = health.nvlink_crc_data_errors;
      break;
    case kNvlinkReplayErrorsTotal:
      number = health.nvlink_replay_errors;
      break;
    case kNvlinkRecoveryErrorsTotal:
      number = health.nvlink_recovery_errors;
      break;
    case kNvlinkThroughputDataTx:
    case kNvlinkThroughputDataRx: {
      const Activity metric =
          value.fieldId == kNvlinkThroughputDataTx ? Activity::NvlinkTx : Activity::NvlinkRx;
      const double kib = model.activity_integral()[index_of(metric)] * 1024.0;
      if (value.scopeId != kAllLinks) {
        if (!spec.nvlink || value.scopeId >= spec.nvlink_links) {
          value.nvmlReturn = spec.nvlink ? nvml::kErrorInvalidArgument : nvml::kErrorNotSupported;
          return true;
        }
        number = static_cast<unsigned long long>(kib / spec.nvlink_links);
      } else {
        number = static_cast<unsigned long long>(kib);
      }
      break;
    }
    default:
      return false;
  }
  if (spec.nvlink) answer_ull(value, number);
  return true;
}

// Violation times in ns: power cap (74), thermal (75 and 269 software, 270 hardware), low
// utilization (78), from the time the model spent so; the others 0.
bool fill_violation(const GpuModel& model, nvmlFieldValue_t& value) {
  const auto time = [&](Violation reason) { return model.violation_ns(reason); };
  switch (value.fieldId) {
    case nvml::kFieldPerfPolicyPower:
      answer_ull(value, time(Violation::PowerCap));
      return true;
    case nvml::kFieldPerfPolicyThermal:
    case nvml::kFieldClocksEventSwThermSlowdown:
      answer_ull(value, time(Violation::SwThermal));
      return true;
    case nvml::kFieldClocksEventHwThermSlowdown:
      answer_ull(value, time(Violation::HwThermal));
      return true;
    case nvml::kFieldPerfPolicyLowUtilization:
      answer_ull(value, time(Violation::LowUtilization));
      return true;
    case nvml::kFieldPerfPolicySyncBoost:
    case nvml::kFieldPerfPolicyBoardLimit:
    case nvml::kFieldPerfPolicyReliability:
    case nvml::kFieldPerfPolicyTotalAppClocks:
    case nvml::kFieldPerfPolicyTotalBaseClocks:
    case nvml::kFieldClocksEventHwPowerBrakeSlowdown:
      answer_ull(value, 0);
      return true;
    default:
      return false;
  }
}

}  // namespace

bool fill_health_field(const SimDevice& device, const CallContext& context,
                       nvmlFieldValue_t& value) {
  const GpuModel& model = device.model;
  const GpuConfig& config = model.config();
  if (fill_violation(model, value)) return true;
  const HealthCounters health = health_at(config.faults.health, context.scenario_ns);
  if (value.fieldId == kPcieReplayCounter || value.fieldId == kPcieReplayRolloverCounter) {
    answer_uint(value, value.fieldId == kPcieReplayCounter ? health.pcie_replays : 0U);
    return true;
  }
  return fill_ecc(config, health, value) || fill_retired(config, health, value) ||
         fill_remapped(device, health, value) || fill_nvlink(model, health, value);
}

}  // namespace gpuscope::sim
