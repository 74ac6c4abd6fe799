// The exported name, type, help and unit scale of every catalog metric, in gpuscope's own
// naming (`gpuscope_<what>_<unit>`, base units, Prometheus conventions; docs/live.md), in
// dcgm-exporter's (`DCGM_FI_DEV_POWER_USAGE`, ...) so dashboards written for it work unchanged,
// in Princeton jobstats' GPU exporter's (`nvidia_gpu_duty_cycle`, ...; export/jobstats_*), and in
// AMD's Device Metrics Exporter's (`gpu_gfx_activity`, `gpu_power_usage`, ...).
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/health.hpp"
#include "core/metrics.hpp"

namespace gpuscope::exporter {

enum class Naming { Gpuscope, Dcgm, Jobstats, Amd };

struct ExportedMetric {
  std::string name;       // the series name
  std::string_view type;  // "gauge" or "counter"
  std::string help;
  double scale = 1;  // exported value = catalog value × scale
  // A label of its own (jobstats' `nvidia_gpu_clock{type="sm"}`); empty name: none.
  std::string_view label_name = {};
  std::string_view label_value = {};
  // The value is a whole number the driver gave (jobstats' milliwatts): scaled, then rounded.
  bool whole = false;
};

// How `metric` is exported under `naming`; nullopt when that naming has no name for it
// (dcgm-exporter has no field for, e.g., the PCIe byte counters).
std::optional<ExportedMetric> exported_metric(Metric metric, Naming naming);

// Where the values of a health family (docs/live.md, "GPU health") come from.
enum class HealthSource {
  Row,          // the GPU's latest HealthRow (core/health.hpp): one series per present value
  XidLast,      // the last Xid the driver reported, 0 before any
  XidCount,     // the Xid events seen since gpuscope started
  NvlinkRate,   // DCGM's NVLink bandwidth: Δ(tx + rx KiB) / Δt / 1000, 0 on the first reading
  VgpuLicense,  // dcgm-exporter's vGPU licence status: 0, as DCGM reports on bare metal
};

struct ExportedLabel {
  std::string_view name;  // empty: no label
  std::string_view value;
};

// One series of a health family: a HealthRow value and the labels that tell it from its siblings.
struct HealthSeries {
  HealthMetric metric;
  std::array<ExportedLabel, 2> labels = {};
};

struct HealthFamily {
  std::string_view name;
  std::string_view type;  // "gauge" or "counter"
  std::string_view help;
  HealthSource source;
  double scale = 1;                           // exported value = value × scale
  std::span<const HealthSeries> series = {};  // HealthSource::Row: its series
};

// The health families `naming` exports, in the order of the page; none with jobstats or AMD
// naming (gpuscope reads no health counters of AMD GPUs).
std::span<const HealthFamily> health_families(Naming naming);

// "gpuscope", "dcgm", "jobstats" or "amd" from the command line; nullopt for anything else.
std::optional<Naming> naming_from_text(std::string_view text);

}  // namespace gpuscope::exporter
