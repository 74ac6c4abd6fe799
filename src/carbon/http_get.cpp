#include "carbon/http_get.hpp"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <thread>

#include "core/curl_library.hpp"
#include "core/error.hpp"

namespace gpuscope::carbon {
namespace {

constexpr std::size_t kMaxBody = std::size_t{16} << 20;

struct Received {
  HttpResponse* response;
  bool too_large = false;
};

std::size_t collect_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* r = static_cast<Received*>(user);
  const std::size_t bytes = size * count;
  if (r->response->body.size() + bytes > kMaxBody) {
    r->too_large = true;
    return 0;  // makes curl stop with CURLE_WRITE_ERROR
  }
  r->response->body.append(data, bytes);
  return bytes;
}

// Retry-After: delay-seconds (an HTTP date is not worth parsing here: treated as absent).
std::size_t collect_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* r = static_cast<Received*>(user);
  const std::size_t bytes = size * count;
  std::string line(data, bytes);
  std::transform(line.begin(), line.end(), line.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  constexpr std::string_view kName = "retry-after:";
  if (line.rfind(kName, 0) == 0) {
    char* end = nullptr;
    const double seconds = std::strtod(line.c_str() + kName.size(), &end);
    if (end != line.c_str() + kName.size() && seconds >= 0) r->response->retry_after_s = seconds;
  }
  return bytes;
}

std::string host_of(const std::string& url) {
  auto start = url.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  const auto end = url.find_first_of("/?#", start);
  return url.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

}  // namespace

HttpResponse http_get(const std::string& url, const std::vector<std::string>& headers,
                      std::chrono::milliseconds timeout) {
  const CurlLibrary& c = curl_library();
  std::unique_ptr<CURL, void (*)(CURL*)> curl(c.easy_init(), c.easy_cleanup);
  if (!curl) throw Error("libcurl could not make a handle", "out of memory?", "try again");
  curl_slist* list = nullptr;
  for (const auto& header : headers) list = c.slist_append(list, header.c_str());
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> header_list(list, c.slist_free_all);
  HttpResponse response;
  Received received{&response};
  CURL* h = curl.get();
  c.easy_setopt(h, CURLOPT_URL, url.c_str());
  c.easy_setopt(h, CURLOPT_HTTPHEADER, list);
  c.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  c.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                std::min<long>(3000L, static_cast<long>(timeout.count())));
  c.easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  c.easy_setopt(h, CURLOPT_USERAGENT, "gpuscope");
  c.easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
  c.easy_setopt(h, CURLOPT_MAXREDIRS, 3L);
  c.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  c.easy_setopt(h, CURLOPT_WRITEFUNCTION, collect_body);
  c.easy_setopt(h, CURLOPT_WRITEDATA, &received);
  c.easy_setopt(h, CURLOPT_HEADERFUNCTION, collect_header);
  c.easy_setopt(h, CURLOPT_HEADERDATA, &received);
  const CURLcode rc = c.easy_perform(h);
  if (received.too_large) {
    throw Error(fmt::format("{} answered with more than 16 MiB", host_of(url)),
                "that is no grid intensity answer", "check the URL (--carbon-url)");
  }
  if (rc != CURLE_OK) {
    std::string why = c.easy_strerror(rc);
    if (rc == CURLE_OPERATION_TIMEDOUT) why += fmt::format(" (after {} ms)", timeout.count());
    throw Error(fmt::format("no answer from {}", host_of(url)), why,
                "check the network, or use --carbon-series FILE or the yearly average offline");
  }
  c.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

HttpResponse get_with_retries(const std::string& url, const std::vector<std::string>& headers,
                              const FetchOptions& options) {
  for (int attempt = 1;; ++attempt) {
    HttpResponse r = http_get(url, headers, options.timeout);
    const bool retry = r.status == 429 || r.status >= 500;
    if (!retry || attempt >= options.max_attempts) return r;
    const double wait =
        std::min(r.retry_after_s.value_or(1.0 * attempt), options.max_retry_after_s);
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
  }
}

std::string body_excerpt(const std::string& body) {
  std::string said = body.substr(0, 200);
  std::replace(said.begin(), said.end(), '\n', ' ');
  std::replace(said.begin(), said.end(), '\r', ' ');
  return said;
}

}  // namespace gpuscope::carbon
