#include "export/metric_names.hpp"

#include <fmt/format.h>

#include <array>

namespace gpuscope::exporter {
namespace {

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Catalog names carry their unit as a suffix (`power_w`, `sm_active_pct`); Prometheus wants
// base units spelled out (`_watts`, `_ratio`), and `_total` on counters.
ExportedMetric gpuscope_name(const MetricInfo& m) {
  struct Rule {
    std::string_view suffix;
    std::string_view replacement;
    double scale;
    std::string_view unit_words;
  };
  static constexpr std::array<Rule, 6> kRules = {{
      {"_bytes_per_s", "_bytes_per_second", 1, "bytes per second"},
      {"_pct", "_ratio", 0.01, "ratio 0-1"},
      {"_mhz", "_hertz", 1e6, "Hz"},
      {"_mj", "_joules", 1e-3, "J"},
      {"_w", "_watts", 1, "W"},
      {"_c", "_celsius", 1, "degrees Celsius"},
  }};
  std::string name(m.name);
  double scale = 1;
  std::string_view unit = m.unit;
  for (const Rule& rule : kRules) {
    if (ends_with(m.name, rule.suffix)) {
      name = std::string(m.name.substr(0, m.name.size() - rule.suffix.size())) +
             std::string(rule.replacement);
      scale = rule.scale;
      unit = rule.unit_words;
      break;
    }
  }
  if (m.unit == "B") unit = "bytes";
  // FLOP activity sums four pipes' ratios: up to 4, and computed, not read (docs/analysis.md).
  const bool derived = m.id == Metric::FlopActivePct;
  if (derived) unit = "ratio of one pipe's time, summed over four pipes: 0-4";
  const bool counter = m.kind == MetricKind::Counter;
  if (counter) name += "_total";
  return {"gpuscope_" + name, counter ? "counter" : "gauge",
          fmt::format("{} ({}; {}{})", m.description, unit, derived ? "" : "NVML ", m.source),
          scale};
}

struct DcgmName {
  Metric metric;
  std::string_view name;
  std::string_view type;
  std::string_view help;
  double scale;
};

constexpr double kPerMib = 1.0 / (1024.0 * 1024.0);

// dcgm-exporter's field names, types, help texts and units (MiB for framebuffer, % for the
// utilisation rates, ratios for the profiling fields).
// clang-format off
constexpr std::array<DcgmName, 27> kDcgmNames = {{
  {Metric::PowerW, "DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", 1},
  {Metric::PowerInstantW, "DCGM_FI_DEV_POWER_USAGE_INSTANT", "gauge", "Current instantaneous power usage (in W).", 1},
  {Metric::EnergyMj, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ).", 1},
  {Metric::PowerLimitW, "DCGM_FI_DEV_ENFORCED_POWER_LIMIT", "gauge", "Enforced power limit (in W).", 1},
  {Metric::GpuUtilPct, "DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", 1},
  {Metric::MemUtilPct, "DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).", 1},
  {Metric::SmClockMhz, "DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", 1},
  {Metric::MemClockMhz, "DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", 1},
  {Metric::TemperatureC, "DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", 1},
  {Metric::MemoryTemperatureC, "DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).", 1},
  {Metric::MemoryUsedBytes, "DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", kPerMib},
  {Metric::MemoryFreeBytes, "DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", kPerMib},
  {Metric::MemoryReservedBytes, "DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB).", kPerMib},
  {Metric::ClockEventReasons, "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "gauge", "Current clock throttle reasons (bitmask).", 1},
  {Metric::GraphicsActivePct, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active.", 0.01},
  {Metric::SmActivePct, "DCGM_FI_PROF_SM_ACTIVE", "gauge", "The ratio of cycles an SM has at least 1 warp assigned.", 0.01},
  {Metric::SmOccupancyPct, "DCGM_FI_PROF_SM_OCCUPANCY", "gauge", "The ratio of number of warps resident on an SM.", 0.01},
  {Metric::TensorActivePct, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active.", 0.01},
  {Metric::DfmaTensorActivePct, "DCGM_FI_PROF_PIPE_TENSOR_DFMA_ACTIVE", "gauge", "Ratio of cycles the FP64 tensor (DFMA) pipe is active.", 0.01},
  {Metric::HmmaTensorActivePct, "DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE", "gauge", "Ratio of cycles the HMMA tensor pipe is active.", 0.01},
  {Metric::ImmaTensorActivePct, "DCGM_FI_PROF_PIPE_TENSOR_IMMA_ACTIVE", "gauge", "Ratio of cycles the IMMA tensor pipe is active.", 0.01},
  {Metric::DramActivePct, "DCGM_FI_PROF_DRAM_ACTIVE", "gauge", "Ratio of cycles the device memory interface is active sending or receiving data.", 0.01},
  {Metric::Fp64ActivePct, "DCGM_FI_PROF_PIPE_FP64_ACTIVE", "gauge", "Ratio of cycles the fp64 pipes are active.", 0.01},
  {Metric::Fp32ActivePct, "DCGM_FI_PROF_PIPE_FP32_ACTIVE", "gauge", "Ratio of cycles the fp32 pipes are active.", 0.01},
  {Metric::Fp16ActivePct, "DCGM_FI_PROF_PIPE_FP16_ACTIVE", "gauge", "Ratio of cycles the fp16 pipes are active.", 0.01},
  {Metric::PcieTxBytesPerS, "DCGM_FI_PROF_PCIE_TX_BYTES", "gauge", "The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in bytes per second.", 1},
  {Metric::PcieRxBytesPerS, "DCGM_FI_PROF_PCIE_RX_BYTES", "gauge", "The rate of data received over the PCIe bus - including both protocol headers and data payloads - in bytes per second.", 1},
}};
// clang-format on

}  // namespace

std::optional<ExportedMetric> exported_metric(Metric metric, Naming naming) {
  if (naming == Naming::Gpuscope) return gpuscope_name(info(metric));
  for (const DcgmName& d : kDcgmNames) {
    if (d.metric == metric)
      return ExportedMetric{std::string(d.name), d.type, std::string(d.help), d.scale};
  }
  if (metric == Metric::NvlinkTxBytesPerS || metric == Metric::NvlinkRxBytesPerS) {
    const bool tx = metric == Metric::NvlinkTxBytesPerS;
    return ExportedMetric{tx ? "DCGM_FI_PROF_NVLINK_TX_BYTES" : "DCGM_FI_PROF_NVLINK_RX_BYTES",
                          "gauge",
                          tx ? "The rate of data transmitted over NVLink, not including protocol "
                               "headers, in bytes per second."
                             : "The rate of data received over NVLink, not including protocol "
                               "headers, in bytes per second.",
                          1};
  }
  return std::nullopt;
}

std::optional<Naming> naming_from_text(std::string_view text) {
  if (text == "gpuscope") return Naming::Gpuscope;
  if (text == "dcgm") return Naming::Dcgm;
  return std::nullopt;
}

}  // namespace gpuscope::exporter
