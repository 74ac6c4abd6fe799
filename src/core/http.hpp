// One bounded HTTP request through libcurl (loaded at run time, core/curl_library.hpp): what the
// grid intensity APIs (carbon/) and the Prometheus-API servers (tsdb/) are asked with. Never hangs
// a command: a connect timeout, a total timeout, a cap on the body (or a sink that streams it).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace gpuscope::http {

struct Request {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  // Set: a POST of this body, application/x-www-form-urlencoded (form_encode) unless a
  // "Content-Type:" header says otherwise (a webhook's JSON); else a GET.
  std::optional<std::string> form_body;
  std::chrono::milliseconds timeout{5000};          // the whole request
  std::chrono::milliseconds connect_timeout{3000};  // capped by timeout
  std::size_t max_body = std::size_t{16} << 20;     // larger answers fail (kind TooLarge)
  // Set: a 2xx answer's body goes here piece by piece instead of into Response::body (max_body
  // does not apply); returning false stops the transfer (kind Stopped). Other answers' bodies
  // (an error's words, before a retry) are kept in Response::body as without it.
  std::function<bool(std::string_view)> on_body;
  std::string basic_auth;  // "user:password", sent as HTTP basic auth; empty: none
  std::string ca_file;     // HTTPS: the CA bundle to trust; empty: the system's
  bool insecure_skip_verify = false;
  // The "what to do" of a failure to get an answer (the caller knows its options).
  std::string no_answer_hint = "check the URL and the network";
  std::string too_large_hint = "check the URL";
};

struct Response {
  long status = 0;
  std::string body;
  std::string content_type;             // as the server said it; "" when absent
  std::optional<double> retry_after_s;  // a 429's or 503's Retry-After, in seconds
  std::size_t body_bytes = 0;           // received, streamed or not
};

// Why no answer came.
enum class FailureKind { Resolve, Refused, Timeout, TooLarge, Stopped, Tls, Other };

// No answer: thrown by perform. The message names the host and says what curl said.
class Failure : public Error {
 public:
  Failure(FailureKind kind, std::string what, std::string why, std::string hint)
      : Error(std::move(what), std::move(why), std::move(hint)), kind_(kind) {}
  FailureKind kind() const { return kind_; }

 private:
  FailureKind kind_;
};

// Sends `request`. Throws Failure when no (whole) answer came: the name did not resolve, the
// connection was refused or timed out, TLS failed, the body was too large or cut off, the sink
// stopped it. HTTP errors (4xx, 5xx) are answers.
Response perform(const Request& request);

// A GET of `url` with the extra `headers`: perform with the defaults but the timeout.
Response get(const std::string& url, const std::vector<std::string>& headers,
             std::chrono::milliseconds timeout);

// How often a 429 or 5xx is tried again: after its Retry-After (at most max_retry_after_s),
// else 1 s, 2 s, ... (the attempt number times base_wait_s).
struct RetryPolicy {
  int max_attempts = 3;
  double max_retry_after_s = 10;
  double base_wait_s = 1;
};

// perform, tried again on 429 and 5xx as `policy` says; returns the last answer.
Response perform_with_retries(const Request& request, const RetryPolicy& policy);

// The first 200 characters of an answer's body on one line, for an error message.
std::string body_excerpt(const std::string& body);

// `text` percent-encoded for a URL's query or a form body (RFC 3986 unreserved kept).
std::string url_encode(std::string_view text);

// name=value&... with both percent-encoded: an application/x-www-form-urlencoded body.
std::string form_encode(const std::vector<std::pair<std::string, std::string>>& fields);

// "host:port" of a URL, for messages (never the user:password@ part).
std::string host_of(const std::string& url);

}  // namespace gpuscope::http
