// One bounded HTTP GET through libcurl (loaded at run time, core/curl_library.hpp): what the
// grid intensity APIs are asked with. Never hangs an analysis: 3 s to connect, `timeout` in all,
// at most 16 MiB of body.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace gpuscope::carbon {

struct HttpResponse {
  long status = 0;
  std::string body;
  std::optional<double> retry_after_s;  // a 429's or 503's Retry-After, in seconds
};

// GETs `url` with the extra `headers` ("Name: value"). Throws Error (exit 1) when no answer came:
// the name did not resolve, the connection was refused or timed out, TLS failed, the body was
// too large; the message names the host and says what curl said. HTTP errors are answers.
HttpResponse http_get(const std::string& url, const std::vector<std::string>& headers,
                      std::chrono::milliseconds timeout);

// How a grid API is asked: where, how long each try may take, and how often a 429 or 5xx is
// tried again (after its Retry-After, at most max_retry_after_s; else 1 s, 2 s, ...).
struct FetchOptions {
  std::string base_url;  // --carbon-url, GPUSCOPE_CARBON_URL; empty: the source's own
  std::chrono::milliseconds timeout{5000};
  int max_attempts = 3;
  double max_retry_after_s = 10;
};

// http_get, tried again on 429 and 5xx as `options` says; returns the last answer.
HttpResponse get_with_retries(const std::string& url, const std::vector<std::string>& headers,
                              const FetchOptions& options);

// The first 200 characters of an answer's body on one line, for an error message.
std::string body_excerpt(const std::string& body);

}  // namespace gpuscope::carbon
