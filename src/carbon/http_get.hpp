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

}  // namespace gpuscope::carbon
