// The HTTP client of the Prometheus API (Prometheus, VictoriaMetrics single node and cluster,
// Thanos, Mimir) behind tsdb::Source: libcurl (loaded at run time) through core/http, answers
// parsed by tsdb/answer, long queries cut into pieces under the server's limits (tsdb/pieces).
// Every failure is an Error that names the server and says what to do (docs/jobs.md).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/http.hpp"
#include "tsdb/answer.hpp"
#include "tsdb/site.hpp"
#include "tsdb/source.hpp"

namespace gpuscope::tsdb {

struct ClientOptions {
  std::string url;       // the API's base, prefix included; paths (/api/v1/...) are appended
  std::string url_from;  // where the URL was found, for messages
  std::chrono::milliseconds timeout{30'000};  // each request's
  std::string bearer_token;                   // the secret itself (read from a file)
  std::string basic_auth;                     // user:password (read from a file)
  std::string credentials_said;  // what was sent, without secrets: "a bearer token from FILE"
  std::string ca_file;
  bool insecure_skip_verify = false;
  std::size_t max_body = std::size_t{512} << 20;  // of one answer (raw exports stream instead)
  http::RetryPolicy retry{3, 10, 1};              // 429 and 5xx
  // Points per series of one range piece; 0: the server's limit (Prometheus 11,000,
  // VictoriaMetrics its -search.maxPointsPerTimeseries).
  std::int64_t max_points_per_series = 0;
  // Samples one raw piece of a Prometheus read aims at (well under --query.max-samples).
  std::size_t raw_piece_samples = 2'000'000;
  // How often a range piece refused for a limit is halved again before giving up.
  int max_splits = 12;
};

// The options a Site gives: its URL and timeout, and its credentials read from their files
// (read_secret_file's checks). Throws Error.
ClientOptions client_options(const Site& site);

class Client : public Source {
 public:
  explicit Client(ClientOptions options);

  ServerInfo server() override;
  std::vector<Labels> series(const std::string& selector, const Window& window) override;
  std::vector<Series> raw(const std::string& selector, const Window& window,
                          std::size_t max_points) override;
  std::vector<Series> range(const std::string& expr, const Window& window,
                            std::int64_t step_ms) override;
  std::vector<Series> instant(const std::string& expr, std::int64_t time_ms) override;
  std::vector<std::string> warnings() const override { return warnings_; }

  // The points per series one range piece asks for: the option, else the server's limit.
  std::int64_t range_piece_points();
  std::optional<std::size_t> requests() const override { return requests_; }

 private:
  using Fields = std::vector<std::pair<std::string, std::string>>;

  http::Request request_for(const std::string& path, const Fields& fields) const;
  http::Response send(const http::Request& request, const std::string& query);
  Answer call(const std::string& path, const Fields& fields, const std::string& query);
  std::optional<nlohmann::json> status_data(const std::string& path);
  void detect();
  void detect_victoria_metrics();
  std::vector<Series> raw_victoria_metrics(const std::string& selector, const Window& window,
                                           std::size_t max_points);
  std::vector<Series> raw_prometheus(const std::string& selector, const Window& window,
                                     std::size_t max_points);
  std::vector<Series> range_piece(const std::string& expr, const Window& piece,
                                  std::int64_t step_ms, int depth);
  [[noreturn]] void fail_status(const http::Response& r, const std::string& path,
                                const std::string& query) const;
  void add_warnings(const std::vector<std::string>& found);
  std::string server_name() const;
  // What the server (or a proxy in front of it) said, fit for a message: the credentials sent
  // blanked wherever they are echoed (util/secret_text), control bytes shown, not sent to the
  // terminal (util/visible_text).
  std::string server_words(std::string_view text) const;
  // The first 200 characters of an answer's body, server_words'd before they are cut.
  std::string body_words(const std::string& body) const;

  ClientOptions options_;
  std::vector<std::string> secrets_;  // what server_words blanks
  std::optional<ServerInfo> info_;
  std::int64_t server_max_points_ = kPrometheusMaxPointsPerSeriesDefault;
  std::int64_t server_max_samples_ = 50'000'000;
  std::vector<std::string> warnings_;
  std::size_t requests_ = 0;

  static constexpr std::int64_t kPrometheusMaxPointsPerSeriesDefault = 11'000;
};

// The error of a query refused for one of the server's limits (tsdb/answer's is_limit_error),
// which a smaller piece may stay under.
class LimitError : public Error {
 public:
  using Error::Error;
};

// Unix milliseconds as the API's seconds ("1704067200.123").
std::string api_time(std::int64_t t_ms);

// A Prometheus duration ("15d", "1y2w", "90m", "0s") or a VictoriaMetrics -retentionPeriod
// ("1" months of 31 days, "30d", "2w", "1y", "12h") in seconds; nullopt when not one.
std::optional<double> prometheus_duration_s(const std::string& text);
std::optional<double> victoria_metrics_retention_s(const std::string& text);

}  // namespace gpuscope::tsdb
