// What gssr (eth-cscs/GPU-Saturation-Scorer) recorded for one process, as read from its profile
// folders (ingest/gssr_profile) or its exported SQLite (ingest/gssr_export): plain data, in
// gssr's own units (docs/gssr.md). Converting it into a gpuscope run is ingest/gssr_format's work.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::ingest::gssr {

// gssr's metric names, in the order gssr lists them, and the DCGM field each one is
// (gssr records DCGM_FI_DEV_GPU_UTIL, DCGM_FI_DEV_FB_* and DCGM_FI_PROF_*; docs/gssr.md).
inline constexpr const char* kMetricNames[] = {
    "gpu_utilization", "fb_total",      "fb_free",         "fb_used",
    "fb_resv",         "sm_active",     "sm_occupancy",    "tensor_active",
    "dram_active",     "fp64_active",   "fp32_active",     "fp16_active",
    "pcie_tx_bytes",   "pcie_rx_bytes", "nvlink_tx_bytes", "nvlink_rx_bytes"};
inline constexpr unsigned short kMetricFields[] = {203,  250,  251,  252,  253,  1002, 1003, 1004,
                                                   1005, 1006, 1007, 1008, 1009, 1010, 1011, 1012};
inline constexpr std::size_t kMetricCount = std::size(kMetricNames);
static_assert(std::size(kMetricFields) == kMetricCount);

// The index of a gssr metric name, or nullopt for one gssr does not write.
inline std::optional<std::size_t> metric_index(std::string_view name) {
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    if (name == kMetricNames[m]) return m;
  }
  return std::nullopt;
}

// One GPU's series: values[metric][sample]; NaN where gssr stored NaN or nothing; a metric gssr
// did not record has an empty series.
struct GpuSeries {
  std::string gpu_id;  // as gssr names it ("0")
  std::vector<std::vector<double>> values = std::vector<std::vector<double>>(kMetricCount);
};

struct Process {
  std::string source;  // the file it came from
  std::string job_id;
  std::string step_id;
  std::string label;
  std::string hostname;
  std::int64_t proc_id = 0;
  std::string cmd;
  double start_time_s = 0;           // Unix seconds (gssr's time.time() at the start)
  std::optional<double> end_time_s;  // Unix seconds
  double sampling_ms = 0;            // the interval: sample k is at start + k × interval
  std::vector<GpuSeries> gpus;
};

}  // namespace gpuscope::ingest::gssr
