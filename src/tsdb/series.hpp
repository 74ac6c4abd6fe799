// What a Prometheus-API server (Prometheus, VictoriaMetrics, Thanos, Mimir) answers with: series,
// each a label set and its samples. Plain data, shared by the HTTP client (tsdb/client) and the
// readers that turn an exporter's series into runs (ingest/monitoring_*).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
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

// The latest Unix time in milliseconds whose nanoseconds an int64 holds (2262-04-11): gpuscope's
// run databases keep nanoseconds, so a later (or earlier than its negative) time is refused,
// never multiplied past the int64 and wrapped back (584 years late lands inside the job).
inline constexpr std::int64_t kMaxTimeMs = std::numeric_limits<std::int64_t>::max() / 1'000'000;

// t_ms in nanoseconds; nullopt where they do not fit in an int64.
constexpr std::optional<std::int64_t> ns_of_ms(std::int64_t t_ms) {
  if (t_ms > kMaxTimeMs || t_ms < -kMaxTimeMs) return std::nullopt;
  return t_ms * 1'000'000;
}

// A time window, Unix milliseconds, both ends included.
struct Window {
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;
  std::int64_t length_ms() const { return end_ms - start_ms; }
  bool contains(std::int64_t t_ms) const { return t_ms >= start_ms && t_ms <= end_ms; }
};

}  // namespace gpuscope::tsdb
