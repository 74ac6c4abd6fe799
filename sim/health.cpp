#include "sim/health.hpp"

#include <cmath>

namespace gpuscope::sim {

std::int64_t step_ns(const HealthStep& step) {
  return std::llround(step.at_s * 1e9);
}

HealthCounters health_at(const std::vector<HealthStep>& steps, std::int64_t scenario_ns) {
  HealthCounters sum;
  for (const HealthStep& step : steps) {
    if (step_ns(step) > scenario_ns) break;  // sorted by time
    sum.ecc_corrected += step.ecc_corrected;
    sum.ecc_uncorrected += step.ecc_uncorrected;
    sum.remapped_correctable += step.remapped_correctable;
    sum.remapped_uncorrectable += step.remapped_uncorrectable;
    sum.remap_pending = sum.remap_pending || step.remap_pending;
    sum.remap_failure = sum.remap_failure || step.remap_failure;
    sum.pcie_replays += step.pcie_replays;
    sum.retired_sbe += step.retired_sbe;
    sum.retired_dbe += step.retired_dbe;
    sum.retired_pending = sum.retired_pending || step.retired_pending;
    sum.nvlink_replay_errors += step.nvlink_replay_errors;
    sum.nvlink_recovery_errors += step.nvlink_recovery_errors;
    sum.nvlink_crc_flit_errors += step.nvlink_crc_flit_errors;
    sum.nvlink_crc_data_errors += step.nvlink_crc_data_errors;
  }
  return sum;
}

StepEvents events_of(const HealthStep& step) {
  StepEvents out;
  const auto add = [&](unsigned long long type, unsigned long long data) {
    out.events[out.count++] = {type, data};
  };
  if (step.xid != 0) add(nvml::kEventTypeXidCriticalError, step.xid);
  if (step.ecc_corrected > 0) add(nvml::kEventTypeSingleBitEccError, 0);
  if (step.ecc_uncorrected > 0) add(nvml::kEventTypeDoubleBitEccError, 0);
  if (step.remapped_correctable > 0 || step.remapped_uncorrectable > 0 || step.remap_pending ||
      step.retired_sbe > 0 || step.retired_dbe > 0 || step.retired_pending) {
    add(nvml::kEventTypeDramRetirementEvent, 0);
  }
  if (step.remap_failure) add(nvml::kEventTypeDramRetirementFailure, 0);
  return out;
}

}  // namespace gpuscope::sim
