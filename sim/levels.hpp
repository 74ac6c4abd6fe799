// Activity levels of a GPU: what a phase asks for and what one 100 ms bucket reports.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace gpuscope::sim {

// The modelled activities, one level each. Utilisations are percent (0-100), throughputs MiB/s.
// Named Activity, not Metric, apart from gpuscope::Metric, the metrics gpuscope stores.
enum class Activity : std::size_t {
  Util,         // nvmlDeviceGetUtilizationRates().gpu, GPM GRAPHICS_UTIL
  MemUtil,      // nvmlDeviceGetUtilizationRates().memory
  SmActive,     // GPM SM_UTIL
  SmOccupancy,  // GPM SM_OCCUPANCY
  Tensor,       // GPM ANY_TENSOR_UTIL
  Fp64,         // GPM FP64_UTIL
  Fp32,         // GPM FP32_UTIL
  Fp16,         // GPM FP16_UTIL
  Dram,         // GPM DRAM_BW_UTIL
  PcieTx,       // MiB/s, GPM PCIE_TX_PER_SEC and field 197
  PcieRx,       // MiB/s, GPM PCIE_RX_PER_SEC and field 198
  NvlinkTx,     // MiB/s, GPM NVLINK_TOTAL_TX_PER_SEC
  NvlinkRx,     // MiB/s, GPM NVLINK_TOTAL_RX_PER_SEC
  Count
};

inline constexpr std::size_t kActivityCount = static_cast<std::size_t>(Activity::Count);

using Levels = std::array<double, kActivityCount>;

constexpr std::size_t index_of(Activity metric) {
  return static_cast<std::size_t>(metric);
}

// The scenario key of each metric, in enum order.
inline constexpr std::array<std::string_view, kActivityCount> kActivityKeys = {
    "util",           "mem_util", "sm_active", "sm_occupancy",  "tensor",        "fp64",
    "fp32",           "fp16",     "dram",      "pcie_tx_mibps", "pcie_rx_mibps", "nvlink_tx_mibps",
    "nvlink_rx_mibps"};

// Percentages are capped at 100; throughputs are not.
constexpr bool is_percentage(Activity metric) {
  return metric < Activity::PcieTx;
}

}  // namespace gpuscope::sim
