// The DCGM fields gpuscope reads and the catalog metric each one fills, with the factor to the
// metric's unit: one table for live sampling (collect/dcgm_feed) and for the imports of what
// other tools recorded through DCGM (ingest/: gssr), so a field means the same everywhere
// (docs/sources.md).
#pragma once

#include "core/metrics.hpp"
#include "dcgm/abi.hpp"

namespace gpuscope::dcgm {

struct FieldMapping {
  unsigned short field;
  Metric metric;
  double scale;   // DCGM's unit to the metric's: ratios (0-1) to percent, MiB to bytes
  bool fallback;  // a device field: live sampling fills the metric only where NVML left it empty
};

inline constexpr double kMiB = 1024.0 * 1024.0;

// Every field gpuscope maps, in the order live sampling watches them.
inline constexpr FieldMapping kFieldMappings[] = {
    {kProfGrEngineActive, Metric::GraphicsActivePct, 100.0, false},
    {kProfSmActive, Metric::SmActivePct, 100.0, false},
    {kProfSmOccupancy, Metric::SmOccupancyPct, 100.0, false},
    {kProfTensorActive, Metric::TensorActivePct, 100.0, false},
    {kProfDramActive, Metric::DramActivePct, 100.0, false},
    {kProfFp64Active, Metric::Fp64ActivePct, 100.0, false},
    {kProfFp32Active, Metric::Fp32ActivePct, 100.0, false},
    {kProfFp16Active, Metric::Fp16ActivePct, 100.0, false},
    {kProfPcieTxBytes, Metric::PcieTxBytesPerS, 1.0, false},
    {kProfPcieRxBytes, Metric::PcieRxBytesPerS, 1.0, false},
    {kProfNvlinkTxBytes, Metric::NvlinkTxBytesPerS, 1.0, false},
    {kProfNvlinkRxBytes, Metric::NvlinkRxBytesPerS, 1.0, false},
    {1013, Metric::ImmaTensorActivePct, 100.0, false},
    {1014, Metric::HmmaTensorActivePct, 100.0, false},
    {1015, Metric::DfmaTensorActivePct, 100.0, false},
    {1016, Metric::IntegerActivePct, 100.0, false},
    {kDevGpuUtil, Metric::GpuUtilPct, 1.0, true},
    {kDevFbUsed, Metric::MemoryUsedBytes, kMiB, true},
    {kDevFbFree, Metric::MemoryFreeBytes, kMiB, true},
    {kDevFbReserved, Metric::MemoryReservedBytes, kMiB, true},
};

// The mapping of `field`, or nullptr for one gpuscope does not map (DCGM_FI_DEV_FB_TOTAL is a
// device's size, not a metric: readers keep it as DeviceDescription::memory_total_bytes).
constexpr const FieldMapping* field_mapping(unsigned short field) {
  for (const FieldMapping& m : kFieldMappings) {
    if (m.field == field) return &m;
  }
  return nullptr;
}

}  // namespace gpuscope::dcgm
