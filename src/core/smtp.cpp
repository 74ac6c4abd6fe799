#include "core/smtp.hpp"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "core/curl_library.hpp"
#include "core/error.hpp"

namespace gpuscope::smtp {
namespace {

struct Reading {
  const std::string* text;
  std::size_t at = 0;
};

std::size_t read_message(char* buffer, std::size_t size, std::size_t count, void* user) {
  auto* r = static_cast<Reading*>(user);
  const std::size_t n = std::min(size * count, r->text->size() - r->at);
  std::memcpy(buffer, r->text->data() + r->at, n);
  r->at += n;
  return n;
}

}  // namespace

void send(const Server& server, const std::string& from, const std::vector<std::string>& recipients,
          const std::string& message) {
  const CurlLibrary& c = curl_library();
  const bool implicit_tls = server.url.rfind("smtps://", 0) == 0;
  if (!implicit_tls && server.url.rfind("smtp://", 0) != 0) {
    throw Error::usage(fmt::format("{} is not an SMTP server's URL", server.url), {},
                       "give smtps://host:465 or smtp://host:587 (STARTTLS)");
  }
  const std::unique_ptr<CURL, void (*)(CURL*)> handle(c.easy_init(), c.easy_cleanup);
  if (!handle) throw Error("libcurl could not start a transfer", {}, "try again");
  CURL* h = handle.get();
  curl_slist* to = nullptr;
  for (const auto& r : recipients) to = c.slist_append(to, r.c_str());
  const std::unique_ptr<curl_slist, void (*)(curl_slist*)> to_list(to, c.slist_free_all);
  Reading reading{&message};
  const std::string mail_from = "<" + from + ">";
  c.easy_setopt(h, CURLOPT_URL, server.url.c_str());
  c.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
  c.easy_setopt(h, CURLOPT_USE_SSL, static_cast<long>(CURLUSESSL_ALL));
  c.easy_setopt(h, CURLOPT_MAIL_FROM, mail_from.c_str());
  c.easy_setopt(h, CURLOPT_MAIL_RCPT, to);
  c.easy_setopt(h, CURLOPT_READFUNCTION, read_message);
  c.easy_setopt(h, CURLOPT_READDATA, &reading);
  c.easy_setopt(h, CURLOPT_UPLOAD, 1L);
  c.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  c.easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(server.timeout.count()));
  c.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                static_cast<long>(std::min<std::int64_t>(server.timeout.count(), 10'000)));
  if (!server.user.empty()) {
    c.easy_setopt(h, CURLOPT_USERNAME, server.user.c_str());
    c.easy_setopt(h, CURLOPT_PASSWORD, server.password.c_str());
  }
  if (!server.ca_file.empty()) c.easy_setopt(h, CURLOPT_CAINFO, server.ca_file.c_str());
  const CURLcode rc = c.easy_perform(h);
  if (rc != CURLE_OK) {
    long code = 0;
    c.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    throw Error(fmt::format("the mail server {} did not take the mail", server.url),
                code != 0 ? fmt::format("{} (its last answer: {})", c.easy_strerror(rc), code)
                          : std::string(c.easy_strerror(rc)),
                "check notify.mail in the rules (the server, its CA, the credentials file); "
                "smtp:// needs a server that offers STARTTLS");
  }
}

}  // namespace gpuscope::smtp
