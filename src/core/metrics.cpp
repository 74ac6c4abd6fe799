#include "core/metrics.hpp"

namespace gpuscope {

std::optional<Metric> metric_by_name(std::string_view name) {
  for (const auto& metric : kMetrics) {
    if (metric.name == name) return metric.id;
  }
  return std::nullopt;
}

}  // namespace gpuscope
