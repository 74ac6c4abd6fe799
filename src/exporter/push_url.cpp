#include "exporter/push_url.hpp"

#include <fmt/format.h>

#include <memory>

#include "core/curl_library.hpp"
#include "util/secret_text.hpp"

namespace gpuscope::exporter {
namespace {

struct UrlDeleter {
  void operator()(CURLU* url) const { curl_library().url_cleanup(url); }
};
struct StringDeleter {
  void operator()(char* text) const { curl_library().free(text); }
};

std::unique_ptr<char, StringDeleter> part(CURLU* url, CURLUPart which) {
  char* value = nullptr;
  if (curl_library().url_get(url, which, &value, 0) != CURLUE_OK) return nullptr;
  return std::unique_ptr<char, StringDeleter>(value);
}

Error bad_url(std::string_view text, std::string why) {
  return Error::usage(
      fmt::format("--push '{}' is not a URL to push to", util::url_without_credentials(text)),
      std::move(why), "give the VictoriaMetrics server, e.g. --push http://127.0.0.1:8428");
}

}  // namespace

PushTarget parse_push_url(std::string_view text) {
  // Credentials first, before libcurl parses (a '/' or '#' in the password makes it another
  // URL, or none) and whatever the scheme: never echoed, they would show in `ps` and logs.
  if (util::url_has_credentials(text)) {
    throw Error::usage("--push URL holds credentials",
                       "the command line is visible to every "
                       "user of the machine (ps) and lands in shell histories",
                       "remove them from the URL and set GPUSCOPE_PUSH_USER and "
                       "GPUSCOPE_PUSH_PASSWORD, GPUSCOPE_PUSH_BEARER_TOKEN, or "
                       "--push-auth-file (docs/live.md)");
  }
  const CurlLibrary& curl = curl_library();
  std::unique_ptr<CURLU, UrlDeleter> url(curl.url());
  const std::string copy(text);
  if (curl.url_set(url.get(), CURLUPART_URL, copy.c_str(), 0) != CURLUE_OK) {
    throw bad_url(text, "it must start with http:// or https:// and name a host");
  }
  const auto scheme = part(url.get(), CURLUPART_SCHEME);
  if (!scheme ||
      (std::string_view(scheme.get()) != "http" && std::string_view(scheme.get()) != "https")) {
    throw bad_url(text, "only http and https are supported");
  }
  const auto host = part(url.get(), CURLUPART_HOST);
  if (!host || *host == '\0') throw bad_url(text, "it names no host");
  if (part(url.get(), CURLUPART_USER) || part(url.get(), CURLUPART_PASSWORD)) {
    throw bad_url(text, "it holds credentials");  // not reached: url_has_credentials saw them
  }
  if (part(url.get(), CURLUPART_QUERY) || part(url.get(), CURLUPART_FRAGMENT)) {
    throw bad_url(text, "a query or fragment has no meaning here");
  }
  std::string path;
  if (const auto p = part(url.get(), CURLUPART_PATH)) path = p.get();
  while (!path.empty() && path.back() == '/') path.pop_back();
  if (path.size() < kImportPath.size() ||
      path.compare(path.size() - kImportPath.size(), kImportPath.size(), kImportPath) != 0) {
    path += kImportPath;
  }
  if (curl.url_set(url.get(), CURLUPART_PATH, path.c_str(), 0) != CURLUE_OK) {
    throw bad_url(text, "its path cannot be extended");
  }
  const auto full = part(url.get(), CURLUPART_URL);
  if (!full) throw bad_url(text, "it cannot be assembled");
  return PushTarget{full.get()};
}

}  // namespace gpuscope::exporter
