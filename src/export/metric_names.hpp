// The exported name, type, help and unit scale of every catalog metric, in gpuscope's own
// naming (`gpuscope_<what>_<unit>`, base units, Prometheus conventions; docs/exporters.md) and in
// dcgm-exporter's (`DCGM_FI_DEV_POWER_USAGE`, ...) so dashboards written for it work unchanged.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/metrics.hpp"

namespace gpuscope::exporter {

enum class Naming { Gpuscope, Dcgm };

struct ExportedMetric {
  std::string name;       // the series name
  std::string_view type;  // "gauge" or "counter"
  std::string help;
  double scale = 1;  // exported value = catalog value × scale
};

// How `metric` is exported under `naming`; nullopt when that naming has no name for it
// (dcgm-exporter has no field for, e.g., the PCIe byte counters).
std::optional<ExportedMetric> exported_metric(Metric metric, Naming naming);

// "gpuscope" or "dcgm" from the command line; nullopt for anything else.
std::optional<Naming> naming_from_text(std::string_view text);

}  // namespace gpuscope::exporter
