// Where series come from: the interface the readers of ingest/ ask, so that they can be driven
// by the real HTTP client (tsdb/client.hpp, against Prometheus or VictoriaMetrics) or, in unit
// tests, by series given by hand.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tsdb/series.hpp"

namespace gpuscope::tsdb {

enum class ServerKind { Prometheus, VictoriaMetrics, Other };

// What the server is and keeps.
struct ServerInfo {
  ServerKind kind = ServerKind::Other;
  std::string version;                // as the server reports it; empty when it did not say
  std::optional<double> retention_s;  // how long it keeps samples, where it says
  std::string url;                    // the base URL asked (no credentials in it)
};

class Source {
 public:
  virtual ~Source() = default;

  virtual ServerInfo server() = 0;

  // The label sets of the series matching `selector` ({...} or name{...}) with samples inside
  // `window` (/api/v1/series).
  virtual std::vector<Labels> series(const std::string& selector, const Window& window) = 0;

  // Every stored sample of the series matching `selector` inside `window`, at the times they
  // were scraped (VictoriaMetrics: /api/v1/export; Prometheus: instant queries of a range
  // selector, in pieces). Bounded: throws Error when more than `max_points` would come back.
  virtual std::vector<Series> raw(const std::string& selector, const Window& window,
                                  std::size_t max_points) = 0;

  // A PromQL expression evaluated every `step_ms` over `window` (/api/v1/query_range), split
  // into pieces under the server's points-per-series limit and joined.
  virtual std::vector<Series> range(const std::string& expr, const Window& window,
                                    std::int64_t step_ms) = 0;

  // A PromQL expression evaluated at `time_ms` (/api/v1/query): vectors and scalars as series
  // of one point, matrices (a range selector) as their samples.
  virtual std::vector<Series> instant(const std::string& expr, std::int64_t time_ms) = 0;

  // What the server warned about in its answers so far (a partial answer, a limit hit).
  virtual std::vector<std::string> warnings() const = 0;

  // The HTTP requests sent so far, retries included (what reading a job cost the server);
  // nullopt for a source that sends none.
  virtual std::optional<std::size_t> requests() const { return std::nullopt; }
};

}  // namespace gpuscope::tsdb
