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

struct JobstatsName {
  Metric metric;
  std::string_view name;
  std::string_view help;
  double scale;
  std::string_view clock_type;  // nvidia_gpu_clock's type label
};

// Princeton jobstats' GPU exporter (github.com/plazonic/nvidia_gpu_prometheus_exporter, main.go):
// its names and help texts, and its units: duty cycle in % (NVML's utilization rate), power in
// mW, clocks in MHz with a type label, the GPM fields as 0-1 ratios despite their `_percent`
// names (it divides NVML's percentages by 100), PCIe and NVLink in bytes per second. Its other
// series (num_devices, memory_total_bytes, jobId, jobUid) are not catalog metrics.
// clang-format off
constexpr std::array<JobstatsName, 21> kJobstatsNames = {{
  {Metric::GpuUtilPct, "nvidia_gpu_duty_cycle", "Percent of time over the past sample period during which one or more kernels were executing on the GPU device", 1, ""},
  {Metric::MemoryUsedBytes, "nvidia_gpu_memory_used_bytes", "Memory used by the GPU device in bytes", 1, ""},
  {Metric::PowerW, "nvidia_gpu_power_usage_milliwatts", "Power usage of the GPU device in milliwatts", 1000, ""},
  {Metric::TemperatureC, "nvidia_gpu_temperature_celsius", "Temperature of the GPU device in celsius", 1, ""},
  {Metric::GraphicsClockMhz, "nvidia_gpu_clock", "Clock speed", 1, "graphics"},
  {Metric::SmClockMhz, "nvidia_gpu_clock", "Clock speed", 1, "sm"},
  {Metric::MemClockMhz, "nvidia_gpu_clock", "Clock speed", 1, "mem"},
  {Metric::ClockEventReasons, "nvidia_gpu_clock_event_reason", "Bitmask of active clocks event reasons, check NvmlClocksEventReasons", 1, ""},
  {Metric::GraphicsActivePct, "nvidia_gpu_graphics_util_percent", "Percentage of time any compute/graphics app was active on the GPU", 0.01, ""},
  {Metric::SmActivePct, "nvidia_gpu_sm_util_percent", "Percentage of SMs that were busy", 0.01, ""},
  {Metric::SmOccupancyPct, "nvidia_gpu_sm_occupancy_percent", "Percentage of warps that were active vs theoretical maximum", 0.01, ""},
  {Metric::IntegerActivePct, "nvidia_gpu_integer_util", "Percentage of time the GPU's SMs were doing integer operations", 0.01, ""},
  {Metric::TensorActivePct, "nvidia_gpu_any_tensor_util_percent", "Percentage of time the GPU's SMs were doing ANY tensor operations", 0.01, ""},
  {Metric::DramActivePct, "nvidia_gpu_dram_bw_util_percent", "Percentage of DRAM bw used vs theoretical maximum", 0.01, ""},
  {Metric::Fp64ActivePct, "nvidia_gpu_fp64_util_percent", "Percentage of time the GPU's SMs were doing non-tensor FP64 math", 0.01, ""},
  {Metric::Fp32ActivePct, "nvidia_gpu_fp32_util_percent", "Percentage of time the GPU's SMs were doing non-tensor FP32 math", 0.01, ""},
  {Metric::Fp16ActivePct, "nvidia_gpu_fp16_util_percent", "Percentage of time the GPU's SMs were doing non-tensor FP16 math", 0.01, ""},
  {Metric::PcieTxBytesPerS, "nvidia_gpu_pcie_tx_per_sec", "PCIe traffic from this GPU in bytes/sec", 1, ""},
  {Metric::PcieRxBytesPerS, "nvidia_gpu_pcie_rx_per_sec", "PCIe traffic to this GPU in bytes/sec", 1, ""},
  {Metric::NvlinkRxBytesPerS, "nvidia_gpu_nvlink_total_rx_per_sec", "NvLink read bandwidth for all links in bytes/sec", 1, ""},
  {Metric::NvlinkTxBytesPerS, "nvidia_gpu_nvlink_total_tx_per_sec", "NvLink write bandwidth for all links in bytes/sec", 1, ""},
}};
// clang-format on

std::optional<ExportedMetric> jobstats_name(Metric metric) {
  for (const JobstatsName& j : kJobstatsNames) {
    if (j.metric != metric) continue;
    ExportedMetric out{std::string(j.name), "gauge", std::string(j.help), j.scale};
    if (!j.clock_type.empty()) {
      out.label_name = "type";
      out.label_value = j.clock_type;
    }
    // NVML gives milliwatts as an integer; the catalog's watts are that over 1000.
    out.whole = metric == Metric::PowerW;
    return out;
  }
  return std::nullopt;
}

}  // namespace

std::optional<ExportedMetric> exported_metric(Metric metric, Naming naming) {
  if (naming == Naming::Gpuscope) return gpuscope_name(info(metric));
  if (naming == Naming::Jobstats) return jobstats_name(metric);
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
  if (text == "jobstats") return Naming::Jobstats;
  return std::nullopt;
}

}  // namespace gpuscope::exporter
