#include "exporter/curl_transport.hpp"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/curl_library.hpp"
#include "core/error.hpp"
#include "util/secret_text.hpp"
#include "util/visible_text.hpp"

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

// What the server (or a proxy) said with the credentials blanked wherever they are echoed: the
// secret, "user:password" (an echoed basic auth header carries its base64) and any
// Authorization header's value (util/secret_text, shared with the Prometheus-API client). What
// is printed also has its control bytes shown, not sent to the terminal (util/visible_text).
std::string without_secrets(const std::string& text, const PushAuth& auth) {
  std::vector<std::string> secrets = {auth.secret};
  if (auth.kind == PushAuth::Kind::Basic) secrets.push_back(auth.user + ":" + auth.secret);
  return util::redact_secrets(text, secrets);
}

// What went wrong with a transfer, in curl's most precise words, and what to do about TLS.
std::string transfer_failure(CURLcode rc, const std::string& error_buffer, bool custom_ca) {
  std::string detail = error_buffer.c_str();  // NUL-terminated within the buffer
  if (detail.empty()) detail = curl_library().easy_strerror(rc);
  if (rc == CURLE_PEER_FAILED_VERIFICATION && !custom_ca) {
    detail +=
        "; when the server's certificate is signed by your own CA, give its certificate "
        "with --push-ca FILE";
  } else if (rc == CURLE_SSL_CERTPROBLEM) {
    detail += "; check --push-cert and --push-key (a PEM certificate and its matching key)";
  }
  return detail;
}

}  // namespace

CurlTransport::CurlTransport(std::string url, PushAuth auth, PushTls tls)
    : url_(std::move(url)),
      auth_(std::move(auth)),
      tls_(std::move(tls)),
      error_(CURL_ERROR_SIZE, '\0') {
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
  c.easy_setopt(curl, CURLOPT_ERRORBUFFER, error_.data());
  if (!tls_.cert_file.empty()) c.easy_setopt(curl, CURLOPT_SSLCERT, tls_.cert_file.c_str());
  if (!tls_.key_file.empty()) c.easy_setopt(curl, CURLOPT_SSLKEY, tls_.key_file.c_str());
  if (!tls_.ca_file.empty()) c.easy_setopt(curl, CURLOPT_CAINFO, tls_.ca_file.c_str());
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
  error_[0] = '\0';
  c.easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  c.easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  const CURLcode rc = c.easy_perform(curl);
  if (rc != CURLE_OK) {
    return {
        PushResult::Outcome::Retry,
        util::visible(without_secrets(transfer_failure(rc, error_, !tls_.ca_file.empty()), auth_))};
  }
  long status = 0;
  c.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  if (status >= 200 && status < 300) return {PushResult::Outcome::Delivered, {}};
  // Blanked before the first line is taken, so a header echoed on a later line cannot hide.
  const std::string said = util::visible(first_line(without_secrets(response_, auth_)));
  std::string detail = fmt::format("HTTP {}{}{}", status, said.empty() ? "" : ": ", said);
  if (status == 401 || status == 403) {
    // Not the server's words: a proxy may echo the request's Authorization header.
    detail = fmt::format("HTTP {}", status);
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
