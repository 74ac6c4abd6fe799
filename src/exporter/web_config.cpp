#include "exporter/web_config.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <set>
#include <string_view>
#include <utility>

#include "core/error.hpp"

namespace gpuscope::exporter {
namespace {

constexpr const char* kDocs = "docs/live.md, \"Security\"";

Error bad(const std::string& path, const std::string& what, const std::string& hint) {
  return Error::usage(fmt::format("web config {}: {}", path, what), {}, hint);
}

// The Go names exporter-toolkit accepts for TLS 1.2 and older, and OpenSSL's for the same suite.
// The RC4 and 3DES suites Go still knows are refused: OpenSSL 3 does not offer them.
constexpr std::array<std::pair<std::string_view, std::string_view>, 16> kCipherSuites{{
    {"TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA"},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", "AES256-SHA"},
    {"TLS_RSA_WITH_AES_128_CBC_SHA256", "AES128-SHA256"},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256"},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", "AES256-GCM-SHA384"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA-AES256-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA-AES256-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "ECDHE-ECDSA-AES128-SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", "ECDHE-RSA-AES128-SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305"},
}};
constexpr std::string_view kChachaEcdsa = "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256";

constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kCurves{{
    {"CurveP256", "P-256"},
    {"CurveP384", "P-384"},
    {"CurveP521", "P-521"},
    {"X25519", "X25519"},
}};

// Response headers exporter-toolkit allows in http_server_config.headers, and the values it
// allows where it restricts them (empty: any).
constexpr std::array<std::pair<std::string_view, std::string_view>, 5> kHeaders{{
    {"Content-Security-Policy", ""},
    {"X-Frame-Options", "deny|sameorigin"},
    {"X-Content-Type-Options", "nosniff"},
    {"X-XSS-Protection", ""},
    {"Strict-Transport-Security", ""},
}};

std::string where(const std::string& section, const std::string& key) {
  return section.empty() ? key : section + "." + key;
}

// The keys of one mapping, each taken once. yaml-cpp keeps every entry of a key written twice, so
// reading the entries in turn would let the last one win without a word (a second
// tls_server_config or client_auth_type switching mutual TLS off); exporter-toolkit's strict
// YAML refuses a key given twice, and so does gpuscope, at every level.
class Keys {
 public:
  Keys(const std::string& path, std::string section) : path_(path), section_(std::move(section)) {}
  std::string operator()(const YAML::Node& key) {
    std::string name = key.as<std::string>();
    if (!seen_.insert(name).second) {
      throw bad(path_, fmt::format("{} is given twice", where(section_, name)),
                "keep one of them: YAML takes a key once, and which one gpuscope would use is "
                "not what every reader of the file would assume");
    }
    return name;
  }

 private:
  const std::string& path_;
  std::string section_;
  std::set<std::string> seen_;
};

std::string scalar(const YAML::Node& node, const std::string& path, const std::string& key) {
  if (!node.IsScalar()) throw bad(path, fmt::format("{} must be a string", key), kDocs);
  return node.as<std::string>();
}

bool boolean(const YAML::Node& node, const std::string& path, const std::string& key) {
  const std::string text = node.IsScalar() ? node.as<std::string>() : "";
  if (text == "true") return true;
  if (text == "false") return false;
  throw bad(path, fmt::format("{} must be true or false, not '{}'", key, text), kDocs);
}

std::vector<std::string> strings(const YAML::Node& node, const std::string& path,
                                 const std::string& key) {
  if (!node.IsSequence()) throw bad(path, fmt::format("{} must be a list", key), kDocs);
  std::vector<std::string> out;
  for (const auto& item : node) out.push_back(scalar(item, path, key));
  return out;
}

// Files are relative to the configuration file's directory, as in exporter-toolkit.
std::string resolve(const std::string& file, const std::string& path) {
  if (file.empty() || std::filesystem::path(file).is_absolute()) return file;
  return (std::filesystem::path(path).parent_path() / file).lexically_normal().string();
}

int tls_version(const std::string& text, const std::string& path, const std::string& key) {
  static constexpr std::array<std::pair<std::string_view, int>, 4> kVersions{
      {{"TLS10", 0x0301}, {"TLS11", 0x0302}, {"TLS12", 0x0303}, {"TLS13", 0x0304}}};
  for (const auto& [name, value] : kVersions) {
    if (text == name) return value;
  }
  throw bad(path, fmt::format("{} '{}' is not a TLS version", key, text),
            "use TLS10, TLS11, TLS12 or TLS13");
}

ClientAuth client_auth(const std::string& text, const std::string& path) {
  if (text.empty() || text == "NoClientCert") return ClientAuth::NoClientCert;
  if (text == "RequestClientCert") return ClientAuth::RequestClientCert;
  if (text == "RequireAnyClientCert" || text == "RequireClientCert") {
    return ClientAuth::RequireAnyClientCert;
  }
  if (text == "VerifyClientCertIfGiven") return ClientAuth::VerifyClientCertIfGiven;
  if (text == "RequireAndVerifyClientCert") return ClientAuth::RequireAndVerifyClientCert;
  throw bad(path, fmt::format("client_auth_type '{}' is not a client authentication type", text),
            "use NoClientCert, RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven "
            "or RequireAndVerifyClientCert");
}

std::string cipher_list(const std::vector<std::string>& names, const std::string& path,
                        std::vector<std::string>& notes) {
  std::string list;
  for (const auto& name : names) {
    if (name.rfind("TLS_AES_", 0) == 0 || name.rfind("TLS_CHACHA20_", 0) == 0) {
      notes.push_back(fmt::format(
          "web config: cipher suite {} is a TLS 1.3 suite, which is always enabled and not "
          "configurable (as in Go's crypto/tls)",
          name));
      continue;
    }
    const auto found = std::find_if(kCipherSuites.begin(), kCipherSuites.end(),
                                    [&](const auto& suite) { return suite.first == name; });
    std::string_view openssl;
    if (found != kCipherSuites.end()) {
      openssl = found->second;
    } else if (name == kChachaEcdsa) {
      openssl = "ECDHE-ECDSA-CHACHA20-POLY1305";
    } else {
      throw bad(path, fmt::format("cipher suite {} is not one gpuscope can offer", name),
                "use the ECDHE suites with AES-GCM or CHACHA20-POLY1305 (RC4 and 3DES are not "
                "offered by OpenSSL 3)");
    }
    list += (list.empty() ? "" : ":") + std::string(openssl);
  }
  return list;
}

std::string group_list(const std::vector<std::string>& names, const std::string& path) {
  std::string list;
  for (const auto& name : names) {
    const auto found = std::find_if(kCurves.begin(), kCurves.end(),
                                    [&](const auto& curve) { return curve.first == name; });
    if (found == kCurves.end()) {
      throw bad(path, fmt::format("curve_preferences: {} is not a curve", name),
                "use CurveP256, CurveP384, CurveP521 or X25519");
    }
    list += (list.empty() ? "" : ":") + std::string(found->second);
  }
  return list;
}

void tls_key(TlsServerConfig& tls, const std::string& key, const YAML::Node& value,
             const std::string& path, std::vector<std::string>& notes) {
  const std::string at = where("tls_server_config", key);
  if (key == "cert_file") {
    tls.cert_file = resolve(scalar(value, path, at), path);
  } else if (key == "key_file") {
    tls.key_file = resolve(scalar(value, path, at), path);
  } else if (key == "client_ca_file") {
    tls.client_ca_file = resolve(scalar(value, path, at), path);
  } else if (key == "client_auth_type") {
    tls.client_auth = client_auth(scalar(value, path, at), path);
  } else if (key == "min_version") {
    tls.min_version = tls_version(scalar(value, path, at), path, at);
  } else if (key == "max_version") {
    tls.max_version = tls_version(scalar(value, path, at), path, at);
  } else if (key == "cipher_suites") {
    tls.cipher_list = cipher_list(strings(value, path, at), path, notes);
  } else if (key == "curve_preferences") {
    tls.groups = group_list(strings(value, path, at), path);
  } else if (key == "prefer_server_cipher_suites") {
    tls.prefer_server_cipher_suites = boolean(value, path, at);
  } else if (key == "cert" || key == "key" || key == "client_ca") {
    throw bad(path, fmt::format("{} (inline PEM) is not supported by gpuscope", at),
              fmt::format("put it in a file and use {}_file", key));
  } else if (key == "client_allowed_sans") {
    throw bad(path, fmt::format("{} is not supported by gpuscope", at),
              "give the allowed clients their own CA (client_ca_file) instead");
  } else {
    throw bad(path, fmt::format("unknown key {}", at),
              fmt::format("tls_server_config takes cert_file, key_file, client_auth_type, "
                          "client_ca_file, min_version, max_version, cipher_suites, "
                          "curve_preferences and prefer_server_cipher_suites ({})",
                          kDocs));
  }
}

TlsServerConfig tls_section(const YAML::Node& node, const std::string& path,
                            std::vector<std::string>& notes) {
  if (!node.IsMap()) throw bad(path, "tls_server_config must be a mapping", kDocs);
  TlsServerConfig tls;
  Keys keys(path, "tls_server_config");
  for (const auto& entry : node) {
    tls_key(tls, keys(entry.first), entry.second, path, notes);
  }
  if (tls.cert_file.empty()) throw bad(path, "tls_server_config has no cert_file", kDocs);
  if (tls.key_file.empty()) throw bad(path, "tls_server_config has no key_file", kDocs);
  if (tls.max_version != 0 && tls.max_version < tls.min_version) {
    throw bad(path, "tls_server_config: max_version is older than min_version", kDocs);
  }
  const bool verifies = tls.client_auth == ClientAuth::VerifyClientCertIfGiven ||
                        tls.client_auth == ClientAuth::RequireAndVerifyClientCert;
  if (verifies && tls.client_ca_file.empty()) {
    throw bad(path, "client_auth_type verifies client certificates but there is no client_ca_file",
              "name the CA that signs the clients' certificates in client_ca_file");
  }
  if (!tls.client_ca_file.empty() && tls.client_auth == ClientAuth::NoClientCert) {
    throw bad(path, "client_ca_file is set without a client_auth_type",
              "set client_auth_type: RequireAndVerifyClientCert (exporter-toolkit refuses this "
              "too)");
  }
  return tls;
}

void http_section(const YAML::Node& node, const std::string& path, WebConfig& config) {
  if (!node.IsMap()) throw bad(path, "http_server_config must be a mapping", kDocs);
  Keys keys(path, "http_server_config");
  for (const auto& entry : node) {
    const std::string key = keys(entry.first);
    if (key == "http2") {
      // gpuscope speaks HTTP/1.1 only and offers no h2 by ALPN: clients fall back, as they do
      // against exporter-toolkit with http2: false.
      boolean(entry.second, path, "http_server_config.http2");
    } else if (key == "headers") {
      if (!entry.second.IsMap())
        throw bad(path, "http_server_config.headers must be a mapping", kDocs);
      Keys names(path, "http_server_config.headers");
      for (const auto& header : entry.second) {
        const std::string name = names(header.first);
        const std::string value = scalar(header.second, path, "headers." + name);
        const auto allowed = std::find_if(kHeaders.begin(), kHeaders.end(),
                                          [&](const auto& h) { return h.first == name; });
        if (allowed == kHeaders.end()) {
          throw bad(path, fmt::format("header {} may not be set", name),
                    "exporter-toolkit allows Content-Security-Policy, X-Frame-Options, "
                    "X-Content-Type-Options, X-XSS-Protection and Strict-Transport-Security");
        }
        const std::string values(allowed->second);
        if (!values.empty() && ("|" + values + "|").find("|" + value + "|") == std::string::npos) {
          throw bad(path, fmt::format("header {}: '{}' is not allowed", name, value),
                    fmt::format("use one of {}", values));
        }
        config.headers.emplace_back(name, value);
      }
    } else {
      throw bad(path, fmt::format("unknown key http_server_config.{}", key),
                "http_server_config takes http2 and headers");
    }
  }
}

void users_section(const YAML::Node& node, const std::string& path, WebConfig& config) {
  if (node.IsNull()) return;
  if (!node.IsMap()) throw bad(path, "basic_auth_users must be a mapping of user: hash", kDocs);
  Keys users(path, "basic_auth_users");
  for (const auto& entry : node) {
    const std::string user = users(entry.first);
    const std::string hash = scalar(entry.second, path, "basic_auth_users." + user);
    if (user.empty() || user.find(':') != std::string::npos) {
      throw bad(path, fmt::format("basic_auth_users: '{}' is not a user name", user),
                "a basic-auth user name is not empty and has no ':'");
    }
    const int cost = bcrypt_cost(hash);
    if (cost < 0) {
      // The value is never echoed: it may be a password typed in by mistake.
      throw bad(path,
                fmt::format("basic_auth_users: the password of {} is not a bcrypt hash", user),
                "store bcrypt hashes ($2b$...), made with e.g. htpasswd -nBC 10 USER");
    }
    if (cost < kMinBcryptCost || cost > kMaxBcryptCost) {
      // 2^cost rounds: cost 14 is about a second of a core per check, 31 about 36 hours.
      throw bad(path,
                fmt::format("basic_auth_users: the hash of {} has cost {}, outside {} to {}", user,
                            cost, kMinBcryptCost, kMaxBcryptCost),
                fmt::format("each step doubles the time of a check (cost {} takes about a second "
                            "of a core); make the hash again with e.g. htpasswd -nBC 10 {}",
                            kMaxBcryptCost, user));
    }
    config.basic_auth_users[user] = hash;
  }
}

}  // namespace

namespace {

WebConfig walk(const YAML::Node& root, const std::string& path) {
  WebConfig config;
  config.path = path;
  if (root.IsNull()) return config;
  if (!root.IsMap()) throw bad(path, "the file must be a YAML mapping", kDocs);
  Keys keys(path, "");
  for (const auto& entry : root) {
    const std::string key = keys(entry.first);
    if (key == "tls_server_config") {
      config.tls = tls_section(entry.second, path, config.notes);
    } else if (key == "http_server_config") {
      http_section(entry.second, path, config);
    } else if (key == "basic_auth_users") {
      users_section(entry.second, path, config);
    } else {
      throw bad(path, fmt::format("unknown key {}", key),
                fmt::format("a web config has tls_server_config, http_server_config and "
                            "basic_auth_users ({})",
                            kDocs));
    }
  }
  return config;
}

}  // namespace

WebConfig parse_web_config(const std::string& text, const std::string& path) {
  try {
    return walk(YAML::Load(text), path);
  } catch (const YAML::Exception& e) {
    // A syntax error, or a key or value of a shape no key takes (a list as a key).
    throw bad(
        path,
        fmt::format("not YAML (line {}, column {}: {})", e.mark.line + 1, e.mark.column + 1, e.msg),
        kDocs);
  }
}

}  // namespace gpuscope::exporter

extern "C" __attribute__((visibility("default"))) void gpuscope_parse_web_config(
    const std::string* text, const std::string* path, gpuscope::exporter::WebConfig* out) {
  *out = gpuscope::exporter::parse_web_config(*text, *path);
}
