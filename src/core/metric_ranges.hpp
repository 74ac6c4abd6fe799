// What each metric can physically be: the one table of ranges that foreign values (logs, gssr
// folders, a monitoring database's series) are checked against before they enter a run
// database (ingest/value_screen.hpp, docs/logs.md, docs/jobs.md). A value outside its range, NaN
// or infinite is not a measurement (-300 W, 1e308 W, 900,000 %): it is left out and said, never
// analysed. The bounds are generous on purpose: they refuse what no GPU can report, not what is
// merely unusual.
#pragma once

#include <array>
#include <cmath>
#include <string_view>

#include "core/metrics.hpp"

namespace gpuscope {

struct PhysicalRange {
  Metric id;
  double low;             // the smallest possible value, included
  double high;            // the largest, included
  std::string_view text;  // the range for messages, with its unit: "0 to 5,000 W"
};

namespace metric_range {

// Percentages: 0 to 100, with half a point over for a rounding a tool may print (100.4).
inline constexpr double kPctHigh = 100.5;
// Power: a whole module (Grace Hopper, GB200 superchips: about 2.7 kW) with room to spare.
inline constexpr double kPowerHighW = 5000;
// Counters, bitmasks: what an int64 column holds (below 2^63 = 9.22e18).
inline constexpr double kCounterHigh = 9.2e18;
// Clocks: HBM's 2.6 GHz and GDDR7's reported 14 GHz (RTX 5090) with room to spare.
inline constexpr double kClockHighMhz = 50'000;
// Device memory: 64 TiB.
inline constexpr double kMemoryHighBytes = 70'368'744'177'664.0;
// Throughput: 100 TB/s (NVLink 5 is 1.8 TB/s per GPU).
inline constexpr double kThroughputHigh = 1e14;

}  // namespace metric_range

// clang-format off
inline constexpr std::array<PhysicalRange, kMetricCount> kPhysicalRanges = {{
  {Metric::PowerW, 0, metric_range::kPowerHighW, "0 to 5,000 W"},
  {Metric::PowerInstantW, 0, metric_range::kPowerHighW, "0 to 5,000 W"},
  {Metric::PowerAverageW, 0, metric_range::kPowerHighW, "0 to 5,000 W"},
  {Metric::ModulePowerW, 0, metric_range::kPowerHighW, "0 to 5,000 W"},
  {Metric::EnergyMj, 0, metric_range::kCounterHigh, "0 to 9.2e18 mJ"},
  {Metric::PowerLimitW, 0, metric_range::kPowerHighW, "0 to 5,000 W"},
  {Metric::GpuUtilPct, 0, metric_range::kPctHigh, "0 to 100 %"},
  {Metric::MemUtilPct, 0, metric_range::kPctHigh, "0 to 100 %"},
  {Metric::SmClockMhz, 0, metric_range::kClockHighMhz, "0 to 50,000 MHz"},
  {Metric::MemClockMhz, 0, metric_range::kClockHighMhz, "0 to 50,000 MHz"},
  {Metric::GraphicsClockMhz, 0, metric_range::kClockHighMhz, "0 to 50,000 MHz"},
  {Metric::TemperatureC, -50, 200, "-50 to 200 °C"},
  {Metric::MemoryTemperatureC, -50, 200, "-50 to 200 °C"},
  {Metric::MemoryUsedBytes, 0, metric_range::kMemoryHighBytes, "0 to 64 TiB"},
  {Metric::MemoryFreeBytes, 0, metric_range::kMemoryHighBytes, "0 to 64 TiB"},
  {Metric::MemoryReservedBytes, 0, metric_range::kMemoryHighBytes, "0 to 64 TiB"},
  {Metric::ClockEventReasons, 0, metric_range::kCounterHigh, "0 to 9.2e18"},
  {Metric::PcieTxBytes, 0, metric_range::kCounterHigh, "0 to 9.2e18 B"},
  {Metric::PcieRxBytes, 0, metric_range::kCounterHigh, "0 to 9.2e18 B"},
  {Metric::GraphicsActivePct, 0, metric_range::kPctHigh, "0 to 100 %"},
  {Metric::SmActivePct, 0, metric_range::kPctHigh, "0 to 100 %"},
  {Metric::SmOccupancyPct, 0, metric_range::kPctHigh, "0 to 100 %"},
  {Metric::TensorActivePct, 0, metric_range::kPctHigh, "0 to 100 %"},
  {Metric::DfmaTensorActivePct, 0, metric_range::kPctHigh, "0 to 100 %"},
  {Metric::HmmaTensorActivePct, 0, metric_range::kPctHigh, "0 to 100 %"},
  {Metric::ImmaTensorActivePct, 0, metric_range::kPctHigh, "0 to 100 %"},
  {Metric::DramActivePct, 0, metric_range::kPctHigh, "0 to 100 %"},
  {Metric::Fp64ActivePct, 0, metric_range::kPctHigh, "0 to 100 %"},
  {Metric::Fp32ActivePct, 0, metric_range::kPctHigh, "0 to 100 %"},
  {Metric::Fp16ActivePct, 0, metric_range::kPctHigh, "0 to 100 %"},
  {Metric::IntegerActivePct, 0, metric_range::kPctHigh, "0 to 100 %"},
  {Metric::PcieTxBytesPerS, 0, metric_range::kThroughputHigh, "0 to 100 TB/s"},
  {Metric::PcieRxBytesPerS, 0, metric_range::kThroughputHigh, "0 to 100 TB/s"},
  {Metric::NvlinkTxBytesPerS, 0, metric_range::kThroughputHigh, "0 to 100 TB/s"},
  {Metric::NvlinkRxBytesPerS, 0, metric_range::kThroughputHigh, "0 to 100 TB/s"},
  {Metric::UmcActivityPct, 0, metric_range::kPctHigh, "0 to 100 %"},
  {Metric::MmActivityPct, 0, metric_range::kPctHigh, "0 to 100 %"},
  {Metric::XgmiReadBytes, 0, metric_range::kCounterHigh, "0 to 9.2e18 B"},
  {Metric::XgmiWriteBytes, 0, metric_range::kCounterHigh, "0 to 9.2e18 B"},
  {Metric::AmdThrottleStatus, 0, metric_range::kCounterHigh, "0 to 9.2e18"},
  // Four activities summed (gssr's total_flop_activity).
  {Metric::FlopActivePct, 0, 4 * metric_range::kPctHigh, "0 to 400 %"},
}};
// clang-format on

consteval bool ranges_in_order() {
  for (std::size_t i = 0; i < kPhysicalRanges.size(); ++i) {
    if (static_cast<std::size_t>(kPhysicalRanges[i].id) != i) return false;
    if (!(kPhysicalRanges[i].low < kPhysicalRanges[i].high)) return false;
  }
  return true;
}
static_assert(ranges_in_order(), "kPhysicalRanges must list every metric in enum order");

constexpr const PhysicalRange& physical_range(Metric metric) {
  return kPhysicalRanges[static_cast<std::size_t>(metric)];
}

// Whether `value` can be a measurement of `metric`: finite and within its physical range.
inline bool physically_possible(Metric metric, double value) {
  const PhysicalRange& range = physical_range(metric);
  return std::isfinite(value) && value >= range.low && value <= range.high;
}

}  // namespace gpuscope
