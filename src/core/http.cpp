#include "core/http.hpp"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <thread>

#include "core/curl_library.hpp"

namespace gpuscope::http {
namespace {

struct Received {
  const Request* request;
  Response* response;
  const CurlLibrary* curl;
  CURL* handle;
  bool too_large = false;
  bool stopped = false;
  std::optional<bool> streamed;  // decided at the first byte: a 2xx answer goes to on_body
};

std::size_t collect_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* r = static_cast<Received*>(user);
  const std::size_t bytes = size * count;
  r->response->body_bytes += bytes;
  if (r->request->on_body && !r->streamed) {
    long status = 0;
    r->curl->easy_getinfo(r->handle, CURLINFO_RESPONSE_CODE, &status);
    r->streamed = status / 100 == 2;
  }
  if (r->streamed.value_or(false)) {
    if (r->request->on_body(std::string_view(data, bytes))) return bytes;
    r->stopped = true;
    return 0;  // makes curl stop with CURLE_WRITE_ERROR
  }
  if (r->response->body.size() + bytes > r->request->max_body) {
    r->too_large = true;
    return 0;
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

FailureKind kind_of(CURLcode rc) {
  switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return FailureKind::Resolve;
    case CURLE_COULDNT_CONNECT:
      return FailureKind::Refused;
    case CURLE_OPERATION_TIMEDOUT:
      return FailureKind::Timeout;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
      return FailureKind::Tls;
    default:
      return FailureKind::Other;
  }
}

void set_options(const CurlLibrary& c, CURL* h, const Request& request, curl_slist* headers,
                 Received* received) {
  const long total_ms = static_cast<long>(request.timeout.count());
  c.easy_setopt(h, CURLOPT_URL, request.url.c_str());
  c.easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  c.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  c.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                std::min<long>(static_cast<long>(request.connect_timeout.count()), total_ms));
  c.easy_setopt(h, CURLOPT_TIMEOUT_MS, total_ms);
  c.easy_setopt(h, CURLOPT_USERAGENT, "gpuscope");
  c.easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
  c.easy_setopt(h, CURLOPT_MAXREDIRS, 3L);
  c.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  c.easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  c.easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // whatever this libcurl decodes (gzip)
  c.easy_setopt(h, CURLOPT_WRITEFUNCTION, collect_body);
  c.easy_setopt(h, CURLOPT_WRITEDATA, received);
  c.easy_setopt(h, CURLOPT_HEADERFUNCTION, collect_header);
  c.easy_setopt(h, CURLOPT_HEADERDATA, received);
  if (request.form_body) {
    c.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
                  static_cast<curl_off_t>(request.form_body->size()));
    c.easy_setopt(h, CURLOPT_POSTFIELDS, request.form_body->c_str());
  }
  if (!request.basic_auth.empty()) {
    c.easy_setopt(h, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
    c.easy_setopt(h, CURLOPT_USERPWD, request.basic_auth.c_str());
  }
  if (!request.ca_file.empty()) c.easy_setopt(h, CURLOPT_CAINFO, request.ca_file.c_str());
  if (request.insecure_skip_verify) {
    c.easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    c.easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  }
}

[[noreturn]] void fail(const Request& request, const Received& received, CURLcode rc,
                       const char* curl_words) {
  const std::string host = host_of(request.url);
  if (received.too_large) {
    throw Failure(FailureKind::TooLarge,
                  fmt::format("{} answered with more than {}", host,
                              request.max_body >= (std::size_t{1} << 20)
                                  ? fmt::format("{} MiB", request.max_body >> 20)
                                  : fmt::format("{} bytes", request.max_body)),
                  "the answer was not read", request.too_large_hint);
  }
  if (received.stopped) {
    throw Failure(FailureKind::Stopped, fmt::format("the answer of {} was not read whole", host),
                  "its reader stopped it", request.too_large_hint);
  }
  std::string why = curl_words;
  if (rc == CURLE_OPERATION_TIMEDOUT) why += fmt::format(" (after {} ms)", request.timeout.count());
  if (rc == CURLE_PARTIAL_FILE) why += " (the answer was cut off)";
  throw Failure(kind_of(rc), fmt::format("no answer from {}", host), why, request.no_answer_hint);
}

}  // namespace

Response perform(const Request& request) {
  const CurlLibrary& c = curl_library();
  std::unique_ptr<CURL, void (*)(CURL*)> curl(c.easy_init(), c.easy_cleanup);
  if (!curl) throw Error("libcurl could not make a handle", "out of memory?", "try again");
  curl_slist* list = nullptr;
  for (const auto& header : request.headers) list = c.slist_append(list, header.c_str());
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> header_list(list, c.slist_free_all);
  Response response;
  CURL* h = curl.get();
  Received received{&request, &response, &c, h, false, false, std::nullopt};
  set_options(c, h, request, list, &received);
  const CURLcode rc = c.easy_perform(h);
  if (rc != CURLE_OK || received.too_large || received.stopped) {
    fail(request, received, rc, c.easy_strerror(rc));
  }
  c.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &response.status);
  const char* type = nullptr;
  c.easy_getinfo(h, CURLINFO_CONTENT_TYPE, &type);
  if (type != nullptr) response.content_type = type;
  return response;
}

Response get(const std::string& url, const std::vector<std::string>& headers,
             std::chrono::milliseconds timeout) {
  Request request;
  request.url = url;
  request.headers = headers;
  request.timeout = timeout;
  return perform(request);
}

Response perform_with_retries(const Request& request, const RetryPolicy& policy) {
  for (int attempt = 1;; ++attempt) {
    Response r = perform(request);
    const bool retry = r.status == 429 || r.status >= 500;
    if (!retry || attempt >= policy.max_attempts) return r;
    const double wait =
        std::min(r.retry_after_s.value_or(policy.base_wait_s * attempt), policy.max_retry_after_s);
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
  }
}

std::string body_excerpt(const std::string& body) {
  std::string said = body.substr(0, 200);
  std::replace(said.begin(), said.end(), '\n', ' ');
  std::replace(said.begin(), said.end(), '\r', ' ');
  return said;
}

std::string url_encode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char raw : text) {
    const auto ch = static_cast<unsigned char>(raw);
    if (std::isalnum(ch) != 0 || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
      out += static_cast<char>(ch);
    } else {
      out += fmt::format("%{:02X}", ch);
    }
  }
  return out;
}

std::string form_encode(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out;
  for (const auto& [name, value] : fields) {
    if (!out.empty()) out += '&';
    out += url_encode(name) + '=' + url_encode(value);
  }
  return out;
}

std::string host_of(const std::string& url) {
  auto start = url.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  const auto end = url.find_first_of("/?#", start);
  std::string authority =
      url.substr(start, end == std::string::npos ? std::string::npos : end - start);
  const auto at = authority.rfind('@');
  return at == std::string::npos ? authority : authority.substr(at + 1);
}

}  // namespace gpuscope::http
