#include "tsdb/site.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <sstream>

#include "core/error.hpp"
#include "util/secret_text.hpp"
#include "util/small_file.hpp"

namespace gpuscope::tsdb {
namespace {

constexpr const char* kKeys =
    "url, bearer_token_file, basic_auth_file, ca_file, "
    "insecure_skip_verify, timeout";

std::string trimmed(std::string text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

[[noreturn]] void bad_line(const std::string& where, const std::string& why) {
  throw Error::usage(fmt::format("{} cannot be used", where), why,
                     fmt::format("each line is `key = value` with a key of {}; # starts a comment "
                                 "(docs/jobs.md)",
                                 kKeys));
}

void set_key(Site& site, const std::string& key, const std::string& value,
             const std::string& where) {
  if (key == "url") {
    site.url = value;
    site.url_from = where;
  } else if (key == "bearer_token_file") {
    site.bearer_token_file = value;
  } else if (key == "basic_auth_file") {
    site.basic_auth_file = value;
  } else if (key == "ca_file") {
    site.ca_file = value;
  } else if (key == "insecure_skip_verify") {
    if (value != "true" && value != "false")
      bad_line(where, "insecure_skip_verify is true or false");
    site.insecure_skip_verify = value == "true";
  } else if (key == "timeout") {
    site.timeout = parse_timeout(value);
    if (!site.timeout)
      bad_line(where, fmt::format("timeout \"{}\" is not 30s, 2m or 500ms", value));
  } else {
    bad_line(where, fmt::format("unknown key \"{}\"", key));
  }
}

void check_url(const Site& site) {
  // Credentials first, whatever the scheme and however the password is spelled ('/', '#', '@'
  // in it), and never the URL itself in the message: it holds them.
  if (util::url_has_credentials(site.url)) {
    throw Error::usage(fmt::format("the Prometheus URL from {} ({}) carries credentials",
                                   site.url_from, util::url_without_credentials(site.url)),
                       "a URL is printed in messages and seen on command lines",
                       "put them in a file named by basic_auth_file (user:password) instead");
  }
  const auto scheme = site.url.find("://");
  std::string lower = site.url.substr(0, scheme == std::string::npos ? 0 : scheme + 3);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower != "http://" && lower != "https://") {
    throw Error::usage(fmt::format("the Prometheus URL \"{}\" (from {}) is not an http:// or "
                                   "https:// URL",
                                   site.url, site.url_from),
                       "", "give the API's base, e.g. http://prometheus:9090");
  }
}

// The configuration file says where the credentials are sent (`url`): one that others may change
// would let them send the token to their own server. Refused as a credentials file is.
void check_config_modes(const std::string& path, bool required) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    throw Error::usage(fmt::format("cannot read the configuration file {}", path),
                       std::strerror(errno),
                       required ? "check GPUSCOPE_CONFIG" : "fix the file or remove it");
  }
  if ((st.st_mode & (S_IWOTH | S_IWGRP)) != 0) {
    throw Error::usage(
        fmt::format("the configuration file {} may be changed by other users (mode {:o})", path,
                    st.st_mode & 0777),
        "its url decides where the credentials are sent", fmt::format("chmod go-w {}", path));
  }
}

std::optional<std::string> config_file_of(const util::EnvLookup& env,
                                          const std::string& system_file, bool& required) {
  required = false;
  if (auto explicit_file = env("GPUSCOPE_CONFIG"); explicit_file && !explicit_file->empty()) {
    required = true;
    return explicit_file;
  }
  std::string user_file;
  if (auto xdg = env("XDG_CONFIG_HOME"); xdg && !xdg->empty()) {
    user_file = *xdg + "/gpuscope/prometheus.conf";
  } else if (auto home = env("HOME"); home && !home->empty()) {
    user_file = *home + "/.config/gpuscope/prometheus.conf";
  }
  struct stat st {};
  if (!user_file.empty() && stat(user_file.c_str(), &st) == 0) return user_file;
  if (stat(system_file.c_str(), &st) == 0) return system_file;
  return std::nullopt;
}

}  // namespace

std::optional<std::chrono::milliseconds> parse_timeout(const std::string& text) {
  const std::string t = trimmed(text);
  double factor_ms = 1000;
  std::size_t digits = t.size();
  if (t.size() > 2 && t.ends_with("ms")) {
    factor_ms = 1;
    digits -= 2;
  } else if (!t.empty() && (t.back() == 's' || t.back() == 'm' || t.back() == 'h')) {
    factor_ms = t.back() == 's' ? 1000 : t.back() == 'm' ? 60'000 : 3'600'000;
    digits -= 1;
  }
  double value = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + digits, value);
  if (ec != std::errc() || end != t.data() + digits || digits == 0 || !(value > 0) ||
      value * factor_ms > 86'400'000.0) {
    return std::nullopt;
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(value * factor_ms + 0.5));
}

Site parse_site_file(const std::string& text, const std::string& path) {
  Site site;
  site.config_file = path;
  std::istringstream lines(text);
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    const std::string where = fmt::format("{}:{}", path, number);
    line = trimmed(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    const auto equals = line.find('=');
    if (equals == std::string::npos) bad_line(where, "the line has no `=`");
    const std::string key = trimmed(line.substr(0, equals));
    const std::string value = trimmed(line.substr(equals + 1));
    if (value.empty()) bad_line(where, fmt::format("\"{}\" has no value", key));
    set_key(site, key, value, where);
  }
  if (!site.bearer_token_file.empty() && !site.basic_auth_file.empty()) {
    bad_line(path, "it names both bearer_token_file and basic_auth_file; a server takes one");
  }
  return site;
}

Site find_site(const std::optional<std::string>& url_option, const util::EnvLookup& env,
               const std::string& option_name, const std::string& system_file) {
  Site site;
  bool required = false;
  if (const auto file = config_file_of(env, system_file, required)) {
    check_config_modes(*file, required);
    const auto text = util::read_small_file(*file, 64 * 1024);
    if (!text) {
      throw Error::usage(fmt::format("cannot read the configuration file {}", *file),
                         text.error().reason,
                         required ? "check GPUSCOPE_CONFIG" : "fix the file or remove it");
    }
    site = parse_site_file(*text, *file);
  }
  if (url_option && !url_option->empty()) {
    site.url = *url_option;
    site.url_from = option_name;
  } else if (auto env_url = env("GPUSCOPE_PROMETHEUS_URL"); env_url && !env_url->empty()) {
    site.url = *env_url;
    site.url_from = "GPUSCOPE_PROMETHEUS_URL";
  }
  if (auto token = env("GPUSCOPE_PROMETHEUS_BEARER_TOKEN_FILE"); token && !token->empty()) {
    site.bearer_token_file = *token;
    site.basic_auth_file.clear();
  }
  if (auto basic = env("GPUSCOPE_PROMETHEUS_BASIC_AUTH_FILE"); basic && !basic->empty()) {
    site.basic_auth_file = *basic;
    site.bearer_token_file.clear();
  }
  if (site.url.empty()) {
    throw Error::usage(
        "no Prometheus or VictoriaMetrics server is configured",
        site.config_file.empty() ? "no configuration file was found"
                                 : fmt::format("{} has no url", site.config_file),
        fmt::format("give {} URL, set GPUSCOPE_PROMETHEUS_URL, or put `url = ...` in "
                    "~/.config/gpuscope/prometheus.conf or {}",
                    option_name, system_file));
  }
  while (site.url.size() > 8 && site.url.back() == '/') site.url.pop_back();
  check_url(site);
  return site;
}

std::string read_secret_file(const std::string& path, const std::string& what) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    throw Error::usage(fmt::format("cannot read the {} file {}", what, path), std::strerror(errno),
                       "check the path in the configuration");
  }
  if ((st.st_mode & (S_IROTH | S_IWOTH | S_IWGRP)) != 0) {
    throw Error::usage(
        fmt::format("the {} file {} may be read or changed by other users (mode {:o})", what, path,
                    st.st_mode & 0777),
        "a secret must be private to its owner (or readable by its group at most)",
        fmt::format("chmod 600 {}", path));
  }
  const auto text = util::read_small_file(path, 64 * 1024);
  if (!text) {
    throw Error::usage(fmt::format("cannot read the {} file {}", what, path), text.error().reason,
                       "check the path in the configuration");
  }
  std::string first = trimmed(text->substr(0, text->find('\n')));
  if (first.empty()) {
    throw Error::usage(fmt::format("the {} file {} is empty", what, path), "",
                       "put the secret on its first line");
  }
  return first;
}

}  // namespace gpuscope::tsdb
