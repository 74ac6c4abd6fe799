// What the GPUs' health says about the run (docs/health.md): Xids read through
// NVIDIA's Xid catalogue, ECC errors, row remapping, PCIe replays and NVLink errors, each in
// plain words with whose fault it most likely is and what to do.
#pragma once

#include <vector>

#include "analyze/analysis.hpp"

namespace gpuscope::analyze {

// Thresholds from DCGM's health watches (dcgmlib/dcgm_gpu_hardware_limits.h): more PCIe
// replays a minute than the driver team recommends; NVLink CRC errors matter from 100 a second,
// any other NVLink error at once.
inline constexpr double kPcieReplaysPerMinute = 8;
inline constexpr double kNvlinkCrcErrorsPerSecond = 100;
// An event this close to its run's end is said to have ended it.
inline constexpr double kEndedAfterS = 60;
// Time held down by the hardware (thermal slowdown, the power brake) worth a finding.
inline constexpr double kHardwareSlowdownS = 1;

// The health findings, most serious first; they come before every other finding.
std::vector<Finding> health_findings(const Analysis& analysis);

}  // namespace gpuscope::analyze
