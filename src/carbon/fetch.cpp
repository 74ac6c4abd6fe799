#include "carbon/fetch.hpp"

namespace gpuscope::carbon {

HttpResponse get_with_retries(const std::string& url, const std::vector<std::string>& headers,
                              const FetchOptions& options) {
  http::Request request;
  request.url = url;
  request.headers = headers;
  request.timeout = options.timeout;
  request.no_answer_hint =
      "check the network, or use --carbon-series FILE or the yearly average offline";
  request.too_large_hint = "that is no grid intensity answer: check the URL (--carbon-url)";
  http::RetryPolicy policy;
  policy.max_attempts = options.max_attempts;
  policy.max_retry_after_s = options.max_retry_after_s;
  return http::perform_with_retries(request, policy);
}

}  // namespace gpuscope::carbon
