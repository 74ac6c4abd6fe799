// Text that may hold a secret, made safe to print: credentials blanked in what a server or a
// proxy says back (one that echoes the request's Authorization header into an error body), and
// the user:password part of URLs. One place, for every client that sends credentials (the
// Prometheus-API client, the push of samples).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::util {

// What a blanked secret reads as.
inline constexpr std::string_view kRedacted = "[secret]";

// `text` with every credential replaced by kRedacted: each non-empty one of `secrets` as given
// and in base64 (an echoed `Authorization: Basic` header carries base64 of "user:password", so
// pass that string for basic auth), and the value of every Authorization or Proxy-Authorization
// header quoted in it, whatever its case and quoting (`Authorization: Bearer X`,
// `"authorization":["Basic X"]`, `authorization=X`).
std::string redact_secrets(std::string_view text, const std::vector<std::string>& secrets);

// `bytes` in base64 (RFC 4648, with padding).
std::string base64(std::string_view bytes);

// Whether `url` may carry credentials: an '@' anywhere after "scheme://" (any scheme, any
// case), or anywhere at all when it has no scheme. A password may hold '/', '#', '?' or '@'
// unencoded, so no '@' is taken for part of a path.
bool url_has_credentials(std::string_view url);

// `url` with what lies between "scheme://" (or its start) and its last '@' replaced by
// "[credentials]": safe to print. Unchanged when url_has_credentials is false.
std::string url_without_credentials(std::string_view url);

}  // namespace gpuscope::util
