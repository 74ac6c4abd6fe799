#include "export/curl_transport.hpp"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>

#include "core/curl_library.hpp"
#include "core/error.hpp"

namespace gpuscope::exporter {
namespace {

std::size_t collect_response(char* data, std::size_t size, std::size_t count, void* user) {
  auto* out = static_cast<std::string*>(user);
  const std::size_t bytes = size * count;
  if (out->size() < 512) out->append(data, std::min<std::size_t>(bytes, 512 - out->size()));
  return bytes;
}

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

}  // namespace

CurlTransport::CurlTransport(std::string url, PushAuth auth)
    : url_(std::move(url)), auth_(std::move(auth)) {
  const CurlLibrary& c = curl_library();
  CURL* curl = c.easy_init();
  if (!curl) throw Error("libcurl could not make a handle", "out of memory?", "try again");
  curl_ = curl;
  headers_ = c.slist_append(nullptr, "Content-Type: text/plain; charset=utf-8");
  c.easy_setopt(curl, CURLOPT_URL, url_.c_str());
  c.easy_setopt(curl, CURLOPT_HTTPHEADER, static_cast<curl_slist*>(headers_));
  c.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  c.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 3000L);
  c.easy_setopt(curl, CURLOPT_TIMEOUT_MS, 15000L);
  c.easy_setopt(curl, CURLOPT_USERAGENT, "gpuscope");
  c.easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect_response);
  c.easy_setopt(curl, CURLOPT_WRITEDATA, &response_);
  if (auth_.kind == PushAuth::Kind::Basic) {
    c.easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    c.easy_setopt(curl, CURLOPT_USERNAME, auth_.user.c_str());
    c.easy_setopt(curl, CURLOPT_PASSWORD, auth_.secret.c_str());
  } else if (auth_.kind == PushAuth::Kind::Bearer) {
    c.easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
    c.easy_setopt(curl, CURLOPT_XOAUTH2_BEARER, auth_.secret.c_str());
  }
}

CurlTransport::~CurlTransport() {
  const CurlLibrary& c = curl_library();
  c.slist_free_all(static_cast<curl_slist*>(headers_));
  c.easy_cleanup(static_cast<CURL*>(curl_));
}

PushResult CurlTransport::post(const std::string& body) {
  const CurlLibrary& c = curl_library();
  CURL* curl = static_cast<CURL*>(curl_);
  response_.clear();
  c.easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  c.easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  const CURLcode rc = c.easy_perform(curl);
  if (rc != CURLE_OK) return {PushResult::Outcome::Retry, c.easy_strerror(rc)};
  long status = 0;
  c.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  if (status >= 200 && status < 300) return {PushResult::Outcome::Delivered, {}};
  const std::string said = first_line(response_);
  std::string detail = fmt::format("HTTP {}{}{}", status, said.empty() ? "" : ": ", said);
  if (status == 401 || status == 403) {
    detail += fmt::format(
        "; the server refused {}: check GPUSCOPE_PUSH_USER/PASSWORD, "
        "GPUSCOPE_PUSH_BEARER_TOKEN or --push-auth-file",
        auth_.describe());
    return {PushResult::Outcome::Retry, detail};
  }
  if (status == 404) {
    detail += "; is this a VictoriaMetrics server (or a prefix in front of one)?";
    return {PushResult::Outcome::Retry, detail};
  }
  if (status == 400 || status == 413 || status == 422) {
    return {PushResult::Outcome::Rejected, detail};
  }
  return {PushResult::Outcome::Retry, detail};
}

}  // namespace gpuscope::exporter
