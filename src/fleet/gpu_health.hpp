// The health of every GPU the exporters report, as the monitoring server summarises it over a
// window (docs/guard.md, "Broken GPUs"): per GPU, the Xids reported, uncorrected ECC errors,
// row remaps failed or pending, and whether it still reports. A handful of instant queries for
// the whole site (one per series name and figure, each grouped by GPU), never the samples.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tsdb/source.hpp"

namespace gpuscope::fleet {

// One GPU's health over a window.
struct GpuHealth {
  std::string node;
  std::string gpu;                        // as the exporter names it: the UUID, else node/gpuN
  std::optional<double> xid_last;         // the last Xid number reported (0: none yet)
  std::optional<double> xid_max;          // the highest Xid number reported within the window
  std::optional<double> xid_events;       // Xid events within the window
  std::optional<double> uncorrected_ecc;  // uncorrected ECC errors within the window
  std::optional<double> remap_failure;    // 1 when a row remap failed
  std::optional<double> remap_pending;    // 1 when a row remap waits for a reset
  bool reporting = true;                  // it has samples in the window's last part
};

struct HealthWindow {
  std::int64_t from_ms = 0;
  std::int64_t to_ms = 0;
  // The window's last part: a GPU with samples within the window but none after this stopped
  // reporting.
  std::int64_t recent_from_ms = 0;
};

// The GPUs with samples within `window`, in node and GPU order. Their nodes are spelled as in
// `nodes` where a label names one of them (ingest::node_of). Throws Error when the server
// fails.
std::vector<GpuHealth> read_gpu_health(tsdb::Source& source, const HealthWindow& window,
                                       const std::vector<std::string>& nodes);

}  // namespace gpuscope::fleet
