// Where a site's Prometheus-API server is and how to reach it: the URL from an option, the
// environment or the site's configuration file, credentials from files only (never the command
// line, where other users see them). docs/jobs.md, "Servers, credentials and limits".
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "util/environment.hpp"

namespace gpuscope::tsdb {

// What the configuration file and the environment say; paths as given.
struct Site {
  std::string url;                // the API's base URL, prefix included (.../select/0/prometheus)
  std::string url_from;           // where the URL was found, for messages: "--prometheus-url",
                                  // "GPUSCOPE_PROMETHEUS_URL", "/etc/gpuscope/prometheus.conf:3"
  std::string bearer_token_file;  // a file holding the token
  std::string basic_auth_file;    // a file holding user:password
  std::string ca_file;            // HTTPS: the CA bundle to trust
  bool insecure_skip_verify = false;
  std::optional<std::chrono::milliseconds> timeout;  // each request's
  std::string config_file;                           // the file read; "" when none
};

// The configuration file's `key = value` lines (# comments, blank lines): keys url,
// bearer_token_file, basic_auth_file, ca_file, insecure_skip_verify (true/false) and timeout
// (30s, 2m, 500ms or seconds). Throws Error naming `path` and the line of an unknown key, a line
// without `=`, a value that is not one, or both credentials.
Site parse_site_file(const std::string& text, const std::string& path);

// The site as gpuscope finds it: the URL from `url_option` (named `option_name` in messages),
// else GPUSCOPE_PROMETHEUS_URL, else the configuration file: $GPUSCOPE_CONFIG (which must
// exist), else $XDG_CONFIG_HOME/gpuscope/prometheus.conf (~/.config/...), else `system_file`;
// the file's other keys apply whoever gave the URL. GPUSCOPE_PROMETHEUS_BEARER_TOKEN_FILE and
// GPUSCOPE_PROMETHEUS_BASIC_AUTH_FILE replace the file's credentials. Throws Error when no URL is
// found, or the URL carries credentials.
Site find_site(const std::optional<std::string>& url_option, const util::EnvLookup& env,
               const std::string& option_name = "--prometheus-url",
               const std::string& system_file = "/etc/gpuscope/prometheus.conf");

// A credentials file's first line. Throws Error when it cannot be read, is empty, or others
// may read it (mode o+r, or g+w/o+w: the file must be 0600 or 0640).
std::string read_secret_file(const std::string& path, const std::string& what);

// "30s", "2m", "500ms", "1h", or plain seconds ("2.5") in milliseconds; nullopt otherwise.
std::optional<std::chrono::milliseconds> parse_timeout(const std::string& text);

}  // namespace gpuscope::tsdb
