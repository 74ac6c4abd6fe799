// Credentials for pushing: from the environment or a file, never the command line, never logged.
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

}  // namespace gpuscope::exporter
