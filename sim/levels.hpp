// Activity levels of a GPU: what a phase asks for and what one 100 ms bucket reports.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace gpuscope::sim {

// The modelled activity metrics. Utilisations are percent (0-100), throughputs MiB/s.
enum class Metric : std::size_t {
  kUtil,         // nvmlDeviceGetUtilizationRates().gpu, GPM GRAPHICS_UTIL
  kMemUtil,      // nvmlDeviceGetUtilizationRates().memory
  kSmActive,     // GPM SM_UTIL
  kSmOccupancy,  // GPM SM_OCCUPANCY
  kTensor,       // GPM ANY_TENSOR_UTIL
  kFp64,         // GPM FP64_UTIL
  kFp32,         // GPM FP32_UTIL
  kFp16,         // GPM FP16_UTIL
  kDram,         // GPM DRAM_BW_UTIL
  kPcieTx,       // MiB/s, GPM PCIE_TX_PER_SEC and field 197
  kPcieRx,       // MiB/s, GPM PCIE_RX_PER_SEC and field 198
  kNvlinkTx,     // MiB/s, GPM NVLINK_TOTAL_TX_PER_SEC
  kNvlinkRx,     // MiB/s, GPM NVLINK_TOTAL_RX_PER_SEC
  kCount
};

inline constexpr std::size_t kMetricCount = static_cast<std::size_t>(Metric::kCount);

using Levels = std::array<double, kMetricCount>;

constexpr std::size_t index_of(Metric metric) {
  return static_cast<std::size_t>(metric);
}

// The scenario key of each metric, in enum order.
inline constexpr std::array<std::string_view, kMetricCount> kMetricKeys = {
    "util",           "mem_util", "sm_active", "sm_occupancy",  "tensor",        "fp64",
    "fp32",           "fp16",     "dram",      "pcie_tx_mibps", "pcie_rx_mibps", "nvlink_tx_mibps",
    "nvlink_rx_mibps"};

// Percentages are capped at 100; throughputs are not.
constexpr bool is_percentage(Metric metric) {
  return metric < Metric::kPcieTx;
}

}  // namespace gpuscope::sim
