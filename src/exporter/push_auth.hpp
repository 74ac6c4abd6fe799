// Credentials for pushing: from the environment or a file, never the command line, never logged;
// and the TLS files of a push (client certificate and key, CA bundle), checked before it starts.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "util/environment.hpp"

namespace gpuscope::exporter {

struct PushAuth {
  enum class Kind { None, Basic, Bearer };
  Kind kind = Kind::None;
  std::string user;
  std::string secret;  // the password, or the bearer token

  // "none", "basic auth as USER", "a bearer token": for messages (never the secret).
  std::string describe() const;
};

using util::EnvLookup;  // util/environment.hpp

// The credentials from, in order: `auth_file` (--push-auth-file) or env GPUSCOPE_PUSH_AUTH_FILE,
// a file whose first line is `bearer TOKEN` or `basic USER:PASSWORD`; env
// GPUSCOPE_PUSH_BEARER_TOKEN; env GPUSCOPE_PUSH_USER with GPUSCOPE_PUSH_PASSWORD. Two sources at
// once, an unreadable or malformed file: Error::usage (which never quotes a secret).
PushAuth load_push_auth(const std::string& auth_file, const EnvLookup& env);

// --push-cert, --push-key, --push-ca: PEM files handed to libcurl (CURLOPT_SSLCERT, SSLKEY,
// CAINFO). Empty: not given (the system's CA bundle, no client certificate).
struct PushTls {
  std::string cert_file;  // the client certificate (may hold its key too)
  std::string key_file;   // its private key, when not in cert_file
  std::string ca_file;    // CAs to trust for the server's certificate instead of the system's
  bool any() const { return !cert_file.empty() || !key_file.empty() || !ca_file.empty(); }
};

// Error::usage, naming the option and the file, when a file given cannot be read or holds no PEM
// block, or when a key is given without a certificate.
void check_push_tls(const PushTls& tls);

}  // namespace gpuscope::exporter
