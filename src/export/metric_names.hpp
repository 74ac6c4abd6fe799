// The exported name, type, help and unit scale of every catalog metric, in gpuscope's own
// naming (`gpuscope_<what>_<unit>`, base units, Prometheus conventions; docs/exporters.md), in
// dcgm-exporter's (`DCGM_FI_DEV_POWER_USAGE`, ...) so dashboards written for it work unchanged,
// and in Princeton jobstats' GPU exporter's (`nvidia_gpu_duty_cycle`, ...; export/jobstats_*).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/metrics.hpp"

namespace gpuscope::exporter {

enum class Naming { Gpuscope, Dcgm, Jobstats };

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

// "gpuscope", "dcgm" or "jobstats" from the command line; nullopt for anything else.
std::optional<Naming> naming_from_text(std::string_view text);

}  // namespace gpuscope::exporter
