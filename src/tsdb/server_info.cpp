// What the server is (Prometheus, VictoriaMetrics or another), its version, how long it keeps
// samples and its limits, asked once. Prometheus answers /api/v1/status/flags and runtimeinfo;
// VictoriaMetrics answers them "unsupported path requested" (HTTP 400) and tells its flags,
// version and retention in its own /metrics (flag{name="retentionPeriod",...}).
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>

#include "tsdb/answer.hpp"
#include "tsdb/client.hpp"
#include "tsdb/pieces.hpp"
#include "util/json_depth.hpp"

namespace gpuscope::tsdb {
namespace {

constexpr double kDayS = 86'400;

std::optional<double> number_of(std::string_view text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// scheme://host:port of a URL: where VictoriaMetrics serves /metrics, whatever the API prefix.
std::string root_of(const std::string& url) {
  const auto scheme = url.find("://");
  const auto end = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  return url.substr(0, end);
}

// The value of `flag{name="NAME", value="..."}` in VictoriaMetrics' /metrics text.
std::optional<std::string> vm_flag(const std::string& metrics, const std::string& name) {
  const std::string key = fmt::format("flag{{name=\"{}\", value=\"", name);
  const auto at = metrics.find(key);
  if (at == std::string::npos) return std::nullopt;
  const auto start = at + key.size();
  return metrics.substr(start, metrics.find('"', start) - start);
}

constexpr std::size_t kMaxStatusBody = std::size_t{4} << 20;  // Prometheus' flags: ~10 KB

[[noreturn]] void unknown_shape(const std::string& server, const std::string& path,
                                const std::string& why) {
  throw Error(fmt::format("{} answered {} in an unknown shape", server, path), why,
              "check the URL: is it a Prometheus-API server?");
}

// A status endpoint's JSON (a few KB), depth-checked before it is parsed; nullopt when not JSON.
std::optional<nlohmann::json> status_document(const std::string& body, const std::string& server,
                                              const std::string& path) {
  if (util::nesting_past(body, kMaxAnswerDepth)) {
    unknown_shape(
        server, path,
        fmt::format("it nests deeper than {} levels, which the API never does", kMaxAnswerDepth));
  }
  auto doc = nlohmann::json::parse(body, nullptr, false);
  if (doc.is_discarded()) return std::nullopt;
  return doc;
}

// `data`'s `key` as text: "" when absent; an unknown shape when it is not a string (a number
// where the API writes a string was an internal error: nlohmann's type_error).
std::string text_field(const nlohmann::json& data, const std::string& key,
                       const std::string& server, const std::string& path) {
  const auto it = data.find(key);
  if (it == data.end()) return {};
  if (!it->is_string()) {
    unknown_shape(server, path,
                  fmt::format("its \"{}\" is {}, not a string", key,
                              it->is_number()   ? "a number"
                              : it->is_object() ? "an object"
                              : it->is_array()  ? "an array"
                                                : "not text"));
  }
  return it->get<std::string>();
}

}  // namespace

std::optional<double> prometheus_duration_s(const std::string& text) {
  static const std::regex kPart(R"((\d+)(ms|y|w|d|h|m|s))");
  if (text.empty()) return std::nullopt;
  double total = 0;
  std::size_t covered = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kPart);
       it != std::sregex_iterator(); ++it) {
    if (static_cast<std::size_t>(it->position()) != covered) return std::nullopt;
    covered += static_cast<std::size_t>(it->length());
    const double n = std::stod((*it)[1].str());
    const std::string unit = (*it)[2].str();
    total += unit == "ms"  ? n / 1000
             : unit == "s" ? n
             : unit == "m" ? n * 60
             : unit == "h" ? n * 3600
             : unit == "d" ? n * kDayS
             : unit == "w" ? n * 7 * kDayS
                           : n * 365 * kDayS;
  }
  if (covered != text.size()) return std::nullopt;
  return total;
}

std::optional<double> victoria_metrics_retention_s(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const char unit = text.back();
  const double per_unit = unit == 'h'   ? 3600
                          : unit == 'd' ? kDayS
                          : unit == 'w' ? 7 * kDayS
                          : unit == 'y' ? 365 * kDayS
                          : unit == 'm' ? 31 * kDayS  // VictoriaMetrics' month: 31 days
                                        : 0;
  const auto n = number_of(per_unit > 0 ? std::string_view(text).substr(0, text.size() - 1)
                                        : std::string_view(text));
  if (!n || *n <= 0) return std::nullopt;
  return *n * (per_unit > 0 ? per_unit : 31 * kDayS);  // no unit: months
}

ServerInfo Client::server() {
  if (!info_) detect();
  return *info_;
}

// A status endpoint's JSON data; nullopt when the server does not answer it (a proxy may hide
// it). Refused credentials are an error: every later request would be refused too.
std::optional<nlohmann::json> Client::status_data(const std::string& path) {
  http::Request request = request_for(path, {});
  request.max_body = kMaxStatusBody;
  const http::Response r = send(request, "");
  if (r.status == 401 || r.status == 403) fail_status(r, path, "");
  if (r.status != 200) return std::nullopt;
  const auto parsed = status_document(r.body, server_name(), path);
  if (!parsed) return std::nullopt;
  const nlohmann::json& doc = *parsed;
  if (!doc.is_object() || !doc.contains("data") || !doc["data"].is_object()) return std::nullopt;
  return doc["data"];
}

void Client::detect() {
  ServerInfo info;
  info.url = options_.url;
  info_ = info;  // messages of the probes below name the URL only
  if (const auto build = status_data("/api/v1/status/buildinfo")) {
    info_->version = text_field(*build, "version", server_name(), "/api/v1/status/buildinfo");
  }
  const std::string flags_path = "/api/v1/status/flags";
  http::Request request = request_for(flags_path, {});
  request.max_body = kMaxStatusBody;
  const http::Response flags = send(request, "");
  if (flags.status == 401 || flags.status == 403) fail_status(flags, flags_path, "");
  if (flags.body.find("unsupported path requested") != std::string::npos) {
    detect_victoria_metrics();
    return;
  }
  const auto doc = status_document(flags.body, server_name(), flags_path).value_or(nullptr);
  const auto data = doc.is_object() ? doc.find("data") : doc.end();
  if (flags.status != 200 || data == doc.end() || !data->is_object() ||
      !data->contains("storage.tsdb.retention.time")) {
    return;  // another Prometheus-API server (Thanos, Mimir): Prometheus' rules, no retention
  }
  info_->kind = ServerKind::Prometheus;
  const auto flag_text = [&](const std::string& key) {
    return text_field(*data, key, server_name(), flags_path);
  };
  if (const auto samples = number_of(flag_text("query.max-samples"))) {
    server_max_samples_ = static_cast<std::int64_t>(*samples);
  }
  if (const auto runtime = status_data("/api/v1/status/runtimeinfo")) {
    std::string retention =
        text_field(*runtime, "storageRetention", server_name(), "/api/v1/status/runtimeinfo");
    info_->retention_s = prometheus_duration_s(retention.substr(0, retention.find(' ')));
  }
  const auto flag = prometheus_duration_s(flag_text("storage.tsdb.retention.time"));
  if (!info_->retention_s && flag && *flag > 0) info_->retention_s = flag;
  if (!info_->retention_s) info_->retention_s = 15 * kDayS;  // Prometheus' default
}

void Client::detect_victoria_metrics() {
  info_->kind = ServerKind::VictoriaMetrics;
  server_max_points_ = kVictoriaMetricsMaxPointsPerSeries;
  http::Request request = request_for(root_of(options_.url) + "/metrics", {});
  request.max_body = std::size_t{16} << 20;
  http::Response metrics;
  try {
    metrics = send(request, "");
  } catch (const Error&) {
    return;  // /metrics is not reachable through every proxy: the defaults stand
  }
  if (metrics.status != 200) return;
  constexpr std::string_view kVersion = "vm_app_version{version=\"";
  if (const auto at = metrics.body.find(kVersion);
      at != std::string::npos && info_->version.empty()) {
    const auto start = at + kVersion.size();
    info_->version = metrics.body.substr(start, metrics.body.find('"', start) - start);
  }
  // vmselect of a cluster has no retentionPeriod: its vmstorage nodes keep the data.
  if (const auto retention = vm_flag(metrics.body, "retentionPeriod")) {
    info_->retention_s = victoria_metrics_retention_s(*retention);
  }
  if (const auto points = vm_flag(metrics.body, "search.maxPointsPerTimeseries")) {
    // A whole number of points (VictoriaMetrics' flag is an integer); anything else would make
    // pieces of no point and no query at all.
    const auto n = number_of(*points);
    if (!n || *n != std::floor(*n) || *n < 3 || *n > 1e15) {
      throw Error(
          fmt::format("{} says its -search.maxPointsPerTimeseries is \"{}\"", server_name(),
                      points->substr(0, 40)),
          "not a whole number of points above 2: gpuscope cuts its range queries into pieces of "
          "that many points, and could send none",
          "check the server's flag (its /metrics, flag{name=\"search.maxPointsPerTimeseries\"}); "
          "VictoriaMetrics' default is 30000");
    }
    server_max_points_ = static_cast<std::int64_t>(*n);
  }
}

std::int64_t Client::range_piece_points() {
  if (options_.max_points_per_series > 0) return options_.max_points_per_series;
  server();
  // VictoriaMetrics counts one more point when it aligns the window to the step.
  return info_->kind == ServerKind::VictoriaMetrics ? server_max_points_ - 2 : server_max_points_;
}

}  // namespace gpuscope::tsdb
