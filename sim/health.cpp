#include "sim/health.hpp"

#include <cmath>

namespace gpuscope::sim {

std::int64_t step_ns(const HealthStep& step) {
  return std::llround(step.at_s * 1e9);
}

HealthCounts& HealthCounts::operator+=(const HealthCounts& step) {
  ecc_corrected += step.ecc_corrected;
  ecc_uncorrected += step.ecc_uncorrected;
  remapped_correctable += step.remapped_correctable;
  remapped_uncorrectable += step.remapped_uncorrectable;
  remap_pending = remap_pending || step.remap_pending;
  remap_failure = remap_failure || step.remap_failure;
  pcie_replays += step.pcie_replays;
  retired_sbe += step.retired_sbe;
  retired_dbe += step.retired_dbe;
  retired_pending = retired_pending || step.retired_pending;
  nvlink_replay_errors += step.nvlink_replay_errors;
  nvlink_recovery_errors += step.nvlink_recovery_errors;
  nvlink_crc_flit_errors += step.nvlink_crc_flit_errors;
  nvlink_crc_data_errors += step.nvlink_crc_data_errors;
  return *this;
}

HealthCounters health_at(const std::vector<HealthStep>& steps, std::int64_t scenario_ns) {
  HealthCounters sum;
  for (const HealthStep& step : steps) {
    if (step_ns(step) > scenario_ns) break;  // sorted by time
    sum += step.counts;
  }
  return sum;
}

StepEvents events_of(const HealthStep& step) {
  StepEvents out;
  const auto add = [&](unsigned long long type, unsigned long long data) {
    out.events[out.count++] = {type, data};
  };
  if (step.xid != 0) add(nvml::kEventTypeXidCriticalError, step.xid);
  const HealthCounts& c = step.counts;
  if (c.ecc_corrected > 0) add(nvml::kEventTypeSingleBitEccError, 0);
  if (c.ecc_uncorrected > 0) add(nvml::kEventTypeDoubleBitEccError, 0);
  if (c.remapped_correctable > 0 || c.remapped_uncorrectable > 0 || c.remap_pending ||
      c.retired_sbe > 0 || c.retired_dbe > 0 || c.retired_pending) {
    add(nvml::kEventTypeDramRetirementEvent, 0);
  }
  if (c.remap_failure) add(nvml::kEventTypeDramRetirementFailure, 0);
  return out;
}

}  // namespace gpuscope::sim
