#include "sim/gpm.hpp"

#include <array>

namespace gpuscope::sim {
namespace {

struct GpmMetricInfo {
  unsigned int id;
  Activity level;
  const char* short_name;
  const char* long_name;
  const char* unit;
};

constexpr std::array<GpmMetricInfo, 12> kMetrics = {{
    {nvml::kGpmGraphicsUtil, Activity::Util, "GR_UTIL", "Graphics engine utilization", "%"},
    {nvml::kGpmSmUtil, Activity::SmActive, "SM_UTIL", "SM utilization", "%"},
    {nvml::kGpmSmOccupancy, Activity::SmOccupancy, "SM_OCCUPANCY", "SM occupancy", "%"},
    {nvml::kGpmAnyTensorUtil, Activity::Tensor, "ANY_TENSOR_UTIL", "Any tensor pipe utilization",
     "%"},
    {nvml::kGpmDramBwUtil, Activity::Dram, "DRAM_BW_UTIL", "DRAM bandwidth utilization", "%"},
    {nvml::kGpmFp64Util, Activity::Fp64, "FP64_UTIL", "FP64 pipe utilization", "%"},
    {nvml::kGpmFp32Util, Activity::Fp32, "FP32_UTIL", "FP32 pipe utilization", "%"},
    {nvml::kGpmFp16Util, Activity::Fp16, "FP16_UTIL", "FP16 pipe utilization", "%"},
    {nvml::kGpmPcieTxPerSec, Activity::PcieTx, "PCIE_TX", "PCIe transmit bandwidth", "MiB/s"},
    {nvml::kGpmPcieRxPerSec, Activity::PcieRx, "PCIE_RX", "PCIe receive bandwidth", "MiB/s"},
    {nvml::kGpmNvlinkTotalRxPerSec, Activity::NvlinkRx, "NVLINK_RX",
     "NVLink receive bandwidth, all links", "MiB/s"},
    {nvml::kGpmNvlinkTotalTxPerSec, Activity::NvlinkTx, "NVLINK_TX",
     "NVLink transmit bandwidth, all links", "MiB/s"},
}};

// nvmlGpmMetric_t declares its names char*; callers only read them, as they do the driver's.
char* c_text(const char* text) {
  return const_cast<char*>(text);
}

}  // namespace

void compute_gpm_metric(const nvmlGpmSample_st& first, const nvmlGpmSample_st& second,
                        nvmlGpmMetric_t& metric) {
  metric.value = 0;
  metric.metricInfo = {nullptr, nullptr, nullptr};
  for (const GpmMetricInfo& info : kMetrics) {
    if (info.id != metric.metricId) continue;
    // PCIe and NVLink belong to the whole GPU: a MIG sample has none.
    if (first.instance != nullptr && !is_percentage(info.level)) break;
    const std::size_t m = index_of(info.level);
    const double seconds = static_cast<double>(second.time_ns - first.time_ns) / 1e9;
    metric.value = (second.integral[m] - first.integral[m]) / seconds;
    metric.nvmlReturn = nvml::kSuccess;
    metric.metricInfo = {c_text(info.short_name), c_text(info.long_name), c_text(info.unit)};
    return;
  }
  metric.nvmlReturn = nvml::kErrorNotSupported;
}

}  // namespace gpuscope::sim
