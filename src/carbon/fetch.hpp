// How the grid intensity APIs are asked: core/http's bounded request, with the grid sources'
// options (where, how long each try may take, how often a 429 or 5xx is tried again) and their
// advice when no answer comes. Never hangs an analysis: 3 s to connect, `timeout` in all, at
// most 16 MiB of body.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/http.hpp"

namespace gpuscope::carbon {

using HttpResponse = http::Response;
using http::body_excerpt;

// How a grid API is asked: where, how long each try may take, and how often a 429 or 5xx is
// tried again (after its Retry-After, at most max_retry_after_s; else 1 s, 2 s, ...).
struct FetchOptions {
  std::string base_url;  // --carbon-url, GPUSCOPE_CARBON_URL; empty: the source's own
  std::chrono::milliseconds timeout{5000};
  int max_attempts = 3;
  double max_retry_after_s = 10;
};

// A GET of `url` with the extra `headers` ("Name: value"), tried again on 429 and 5xx as
// `options` says; returns the last answer. Throws Error (exit 1) when no answer came (the message
// names the host and says what curl said). HTTP errors are answers.
HttpResponse get_with_retries(const std::string& url, const std::vector<std::string>& headers,
                              const FetchOptions& options);

}  // namespace gpuscope::carbon
