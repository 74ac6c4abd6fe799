#include "tsdb/client.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <thread>

#include "tsdb/answer.hpp"
#include "util/secret_text.hpp"
#include "util/visible_text.hpp"

namespace gpuscope::tsdb {
namespace {

std::string status_hint(long status) {
  if (status == 404) {
    return "check the URL's path: it is the API's base, to which /api/v1/... is appended "
           "(Prometheus: http://host:9090; VictoriaMetrics cluster: "
           "http://vmselect:8481/select/0/prometheus; Thanos/Mimir: their prefix, e.g. "
           "http://mimir/prometheus)";
  }
  if (status >= 500 || status == 429) {
    return "the server is failing or overloaded: try again later; its log says why";
  }
  return "check the URL; the server's words are above";
}

}  // namespace

ClientOptions client_options(const Site& site) {
  ClientOptions o;
  o.url = site.url;
  o.url_from = site.url_from;
  if (site.timeout) o.timeout = *site.timeout;
  o.ca_file = site.ca_file;
  o.insecure_skip_verify = site.insecure_skip_verify;
  o.credentials_said = "no credentials";
  if (!site.bearer_token_file.empty()) {
    o.bearer_token = read_secret_file(site.bearer_token_file, "bearer token");
    o.credentials_said = fmt::format("the bearer token of {}", site.bearer_token_file);
  } else if (!site.basic_auth_file.empty()) {
    o.basic_auth = read_secret_file(site.basic_auth_file, "basic auth");
    const auto colon = o.basic_auth.find(':');
    if (colon == std::string::npos || colon == 0) {
      throw Error::usage(
          fmt::format("the basic auth file {} does not hold user:password", site.basic_auth_file),
          "", "write `user:password` on its first line");
    }
    o.credentials_said = fmt::format("basic auth as user \"{}\" from {}",
                                     o.basic_auth.substr(0, colon), site.basic_auth_file);
  }
  return o;
}

Client::Client(ClientOptions options) : options_(std::move(options)) {
  while (options_.url.size() > 8 && options_.url.back() == '/') options_.url.pop_back();
  if (options_.url_from.empty()) options_.url_from = "the caller";
  if (options_.credentials_said.empty()) {
    options_.credentials_said = !options_.bearer_token.empty() ? "a bearer token"
                                : !options_.basic_auth.empty() ? "basic auth"
                                                               : "no credentials";
  }
  // The token, and "user:password" (sent as its base64) with the password alone.
  secrets_ = {options_.bearer_token, options_.basic_auth};
  if (const auto colon = options_.basic_auth.find(':'); colon != std::string::npos) {
    secrets_.push_back(options_.basic_auth.substr(colon + 1));
  }
}

std::string Client::server_words(std::string_view text) const {
  return util::visible(util::redact_secrets(text, secrets_));
}

std::string Client::body_words(const std::string& body) const {
  // Blanked before the cut, so a secret across the 200th character is not half shown.
  const std::string blanked =
      util::redact_secrets(std::string_view(body).substr(0, 64 * 1024), secrets_);
  return util::visible(http::body_excerpt(blanked));
}

std::string Client::server_name() const {
  if (!info_) return options_.url;
  const char* kind = info_->kind == ServerKind::Prometheus        ? "Prometheus"
                     : info_->kind == ServerKind::VictoriaMetrics ? "VictoriaMetrics"
                                                                  : "the server";
  return fmt::format("{} at {}", kind, options_.url);
}

http::Request Client::request_for(const std::string& path, const Fields& fields) const {
  http::Request request;
  request.url = path.rfind("http", 0) == 0 ? path : options_.url + path;
  if (!fields.empty()) request.form_body = http::form_encode(fields);
  request.headers.emplace_back("Accept: application/json");
  if (!options_.bearer_token.empty()) {
    request.headers.push_back("Authorization: Bearer " + options_.bearer_token);
  }
  request.basic_auth = options_.basic_auth;
  request.timeout = options_.timeout;
  request.max_body = options_.max_body;
  request.ca_file = options_.ca_file;
  request.insecure_skip_verify = options_.insecure_skip_verify;
  request.no_answer_hint = fmt::format(
      "check the URL (from {}) and that the server runs and is reachable from here; a slow "
      "server needs a longer `timeout` in the configuration file",
      options_.url_from);
  request.too_large_hint = "ask for a shorter window or fewer series";
  return request;
}

http::Response Client::send(const http::Request& request, const std::string& query) {
  try {
    http::Request counted = request;
    http::RetryPolicy policy = options_.retry;
    http::Response r;
    for (int attempt = 1;; ++attempt) {
      ++requests_;
      r = http::perform(counted);
      const bool retry = r.status == 429 || r.status >= 500;
      if (!retry || attempt >= policy.max_attempts) break;
      const double wait = std::min(r.retry_after_s.value_or(policy.base_wait_s * attempt),
                                   policy.max_retry_after_s);
      std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    }
    return r;
  } catch (const http::Failure& f) {
    if (f.kind() == http::FailureKind::Stopped) throw;
    const std::string what =
        f.kind() == http::FailureKind::TooLarge
            ? fmt::format("{} answered with more than {} MiB{}", server_name(),
                          options_.max_body >> 20, query.empty() ? "" : " for " + shortened(query))
            : fmt::format("no answer from {}", request.url.substr(0, request.url.find('?')));
    throw Error(what, server_words(f.reason()), f.hint());
  }
}

void Client::fail_status(const http::Response& r, const std::string& path,
                         const std::string& query) const {
  const std::string asked = query.empty() ? path : fmt::format("{} of {}", path, shortened(query));
  if (r.status == 401 || r.status == 403) {
    throw Error(
        fmt::format("{} refused the credentials (HTTP {}) for {}", server_name(), r.status, path),
        fmt::format("sent: {}", options_.credentials_said),
        "set bearer_token_file or basic_auth_file in the configuration file (or "
        "GPUSCOPE_PROMETHEUS_BEARER_TOKEN_FILE / GPUSCOPE_PROMETHEUS_BASIC_AUTH_FILE) "
        "to a file holding what this server accepts");
  }
  const std::string excerpt = body_words(r.body);
  throw Error(fmt::format("{} answered HTTP {} to {}", server_name(), r.status, asked),
              excerpt.empty() ? "no words" : excerpt, status_hint(r.status));
}

Answer Client::call(const std::string& path, const Fields& fields, const std::string& query) {
  const http::Response r = send(request_for(path, fields), query);
  if (r.status == 401 || r.status == 403 || r.status == 404 || r.status == 429 || r.status >= 500) {
    fail_status(r, path, query);
  }
  Answer doc;
  try {
    doc = answer_document(r.body);
  } catch (const AnswerShapeError& e) {
    if (r.status != 200) fail_status(r, path, query);
    throw Error(
        fmt::format("{} answered {} with something else than the Prometheus API's JSON",
                    server_name(), path),
        server_words(fmt::format("{}; {}: {}", e.what,
                                 r.content_type.empty() ? "no content type" : r.content_type,
                                 body_words(r.body))),
        "check the URL: a proxy's login page or another service answers there");
  }
  if (const auto error = answer_error(doc)) {
    const std::string what =
        fmt::format("{} refused {}{}", server_name(), path,
                    query.empty() ? "" : fmt::format(" of `{}`", shortened(query)));
    const std::string why = server_words(fmt::format("{}: {}", error->type, error->message));
    if (is_limit_error(*error)) throw LimitError(what, why, "ask for fewer points");
    throw Error(what, why, "check the query; the server's words are above");
  }
  if (r.status != 200) fail_status(r, path, query);
  add_warnings(answer_warnings(doc));
  return doc;
}

void Client::add_warnings(const std::vector<std::string>& found) {
  for (const auto& w : found) {
    const std::string said = fmt::format("{}: {}", options_.url, server_words(w));
    if (std::find(warnings_.begin(), warnings_.end(), said) == warnings_.end()) {
      warnings_.push_back(said);
    }
  }
}

std::string api_time(std::int64_t t_ms) {
  const std::int64_t seconds = t_ms >= 0 ? t_ms / 1000 : -((-t_ms + 999) / 1000);
  const std::int64_t millis = t_ms - seconds * 1000;
  return fmt::format("{}.{:03d}", seconds, millis);
}

}  // namespace gpuscope::tsdb
