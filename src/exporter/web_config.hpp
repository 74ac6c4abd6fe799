// `serve --web-config FILE`: the web configuration file of the Prometheus exporter-toolkit
// (https://github.com/prometheus/exporter-toolkit/blob/master/docs/web-configuration.md), so the
// file a site already has for node_exporter or dcgm-exporter works unchanged. Every key of that
// format is either honoured or an error naming it: nothing is silently ignored.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::exporter {

// tls_server_config's client_auth_type, as Go's crypto/tls names it.
enum class ClientAuth {
  NoClientCert,
  RequestClientCert,           // asked for, not verified
  RequireAnyClientCert,        // required, not verified
  VerifyClientCertIfGiven,     // verified against client_ca_file when given
  RequireAndVerifyClientCert,  // required and verified
};

struct TlsServerConfig {
  std::string cert_file;
  std::string key_file;
  ClientAuth client_auth = ClientAuth::NoClientCert;
  std::string client_ca_file;
  int min_version = 0x0303;  // TLS 1.2, exporter-toolkit's default
  int max_version = 0;       // 0: the newest the library offers (TLS 1.3)
  // OpenSSL names of the TLS 1.2-and-older cipher suites, colon-separated; empty: OpenSSL's.
  std::string cipher_list;
  std::string groups;  // OpenSSL group names of curve_preferences, colon-separated; empty: default
  bool prefer_server_cipher_suites = true;
};

struct WebConfig {
  std::string path;  // the file it came from, for messages
  std::optional<TlsServerConfig> tls;
  std::map<std::string, std::string> basic_auth_users;       // user -> bcrypt hash
  std::vector<std::pair<std::string, std::string>> headers;  // added to every response
  std::vector<std::string> notes;  // what the user should know (said once at start)
};

// The bcrypt costs basic_auth_users may have (docs/live.md, "Basic authentication"): a
// check takes 2^cost rounds, about a second of a current core at 14 (4 s at 16, 36 hours at 31),
// and a hash above that would stall start-up and every first scrape. bcrypt's own floor is 4.
inline constexpr int kMinBcryptCost = 4;
inline constexpr int kMaxBcryptCost = 14;

// The cost of a bcrypt hash ($2a$, $2b$ or $2y$, two digits, 53 characters of bcrypt's base64),
// or -1 when `hash` is not one. Inline: basic_auth checks it too, without the web config's library.
inline int bcrypt_cost(std::string_view hash) {
  constexpr std::string_view kAlphabet =
      "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const auto digit = [&](std::size_t i) { return hash[i] >= '0' && hash[i] <= '9'; };
  if (hash.size() != 60 || hash.substr(0, 2) != "$2" ||
      (hash[2] != 'a' && hash[2] != 'b' && hash[2] != 'y') || hash[3] != '$' || !digit(4) ||
      !digit(5) || hash[6] != '$' ||
      hash.find_first_not_of(kAlphabet, 7) != std::string_view::npos) {
    return -1;
  }
  return (hash[4] - '0') * 10 + (hash[5] - '0');
}

// Checks the text of the web config at `path` (which names it in messages and anchors relative
// files). Throws Error (exit 2) naming the file, the key and what to do for: text that is not
// YAML, an unknown or unsupported key, a value of the wrong type or out of the documented set, a
// hash that is not bcrypt, a missing cert_file or key_file. Files named in it are made absolute
// relative to the file's directory, as exporter-toolkit does; their content is checked when the
// TLS context is made (tls_context). It lives in lib/gpuscope/libgpuscope_webconfig.so with
// yaml-cpp, so that only --web-config loads them; tests and fuzz targets link it directly.
WebConfig parse_web_config(const std::string& text, const std::string& path);

// The file at `path` (a regular file of at most 1 MiB: a directory, a device or a FIFO is refused,
// never read as an empty config) parsed through the library, loaded on first use
// (web_config_loader.cpp). Throws Error when the file or the library cannot be read.
WebConfig load_web_config(const std::string& path);

// The library's entry point: fills `out` or throws Error.
extern "C" void gpuscope_parse_web_config(const std::string* text, const std::string* path,
                                          WebConfig* out);

}  // namespace gpuscope::exporter
