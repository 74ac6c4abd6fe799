// What a Prometheus-API server (Prometheus, VictoriaMetrics, Thanos, Mimir) answers with: series,
// each a label set and its samples. Plain data, shared by the HTTP client (tsdb/client) and the
// readers that turn an exporter's series into runs (ingest/monitoring_*).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gpuscope::tsdb {

// A series' labels, `__name__` (the metric name) included.
using Labels = std::map<std::string, std::string>;

struct Point {
  std::int64_t t_ms = 0;  // Unix time in milliseconds, as the server stores it
  double value = 0;       // NaN and ±Inf pass through as the server sent them
};

struct Series {
  Labels labels;
  std::vector<Point> points;  // in time order, no two at the same t_ms

  const std::string& name() const;                         // labels["__name__"], or ""
  const std::string* label(const std::string& key) const;  // nullptr when absent
};

// A time window, Unix milliseconds, both ends included.
struct Window {
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;
  std::int64_t length_ms() const { return end_ms - start_ms; }
};

}  // namespace gpuscope::tsdb
