#include "core/metrics.hpp"

#include <utility>

namespace gpuscope {

const MetricMeaning* metric_meaning(Metric metric, std::optional<Vendor> vendor) {
  const MetricMeaning* any = nullptr;
  for (const MetricMeaning& m : kMetricMeanings) {
    if (m.metric != metric) continue;
    if (m.vendor && m.vendor == vendor) return &m;
    if (!m.vendor) any = &m;
  }
  return any;
}

std::optional<Metric> metric_by_name(std::string_view name) {
  for (const auto& metric : kMetrics) {
    if (metric.name == name) return metric.id;
  }
  // gssr's names. pcie_tx_bytes and pcie_rx_bytes are not among them: in gpuscope they name the
  // cumulative counters (fields 197/198), in gssr the rates.
  static constexpr std::pair<std::string_view, Metric> kGssrNames[] = {
      {"gpu_utilization", Metric::GpuUtilPct},
      {"fb_used", Metric::MemoryUsedBytes},
      {"fb_free", Metric::MemoryFreeBytes},
      {"fb_resv", Metric::MemoryReservedBytes},
      {"sm_active", Metric::SmActivePct},
      {"sm_occupancy", Metric::SmOccupancyPct},
      {"tensor_active", Metric::TensorActivePct},
      {"dram_active", Metric::DramActivePct},
      {"fp64_active", Metric::Fp64ActivePct},
      {"fp32_active", Metric::Fp32ActivePct},
      {"fp16_active", Metric::Fp16ActivePct},
      {"nvlink_tx_bytes", Metric::NvlinkTxBytesPerS},
      {"nvlink_rx_bytes", Metric::NvlinkRxBytesPerS},
      {"flop_active", Metric::FlopActivePct},
      {"total_flop_activity", Metric::FlopActivePct},
  };
  for (const auto& [alias, metric] : kGssrNames) {
    if (alias == name) return metric;
  }
  return std::nullopt;
}

}  // namespace gpuscope
