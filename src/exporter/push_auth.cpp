#include "exporter/push_auth.hpp"

#include <fmt/format.h>

#include <fstream>

#include "util/small_file.hpp"

namespace gpuscope::exporter {
namespace {

std::string trim(std::string text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

PushAuth from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw Error::usage(fmt::format("cannot read the push credentials file {}", path), {},
                       "check the path given with --push-auth-file or "
                       "GPUSCOPE_PUSH_AUTH_FILE");
  }
  // Only the first line, and only so much of it: /dev/zero or /dev/urandom given by mistake
  // must not fill memory. A pipe stays allowed (--push-auth-file <(pass show vm)).
  constexpr std::size_t kMaxLine = 64 * 1024;
  std::string line;
  for (char c = 0; line.size() <= kMaxLine && in.get(c) && c != '\n';) line += c;
  if (line.size() > kMaxLine) {
    throw Error::usage(
        fmt::format("the push credentials file {} has no line break in its first 64 KiB", path), {},
        "its first line must be 'bearer TOKEN' or 'basic USER:PASSWORD'");
  }
  line = trim(line);
  const auto space = line.find(' ');
  const std::string scheme = line.substr(0, space);
  const std::string rest = space == std::string::npos ? "" : trim(line.substr(space + 1));
  PushAuth auth;
  if ((scheme == "bearer" || scheme == "Bearer") && !rest.empty()) {
    auth.kind = PushAuth::Kind::Bearer;
    auth.secret = rest;
    return auth;
  }
  if ((scheme == "basic" || scheme == "Basic") && rest.find(':') != std::string::npos) {
    auth.kind = PushAuth::Kind::Basic;
    auth.user = rest.substr(0, rest.find(':'));
    auth.secret = rest.substr(rest.find(':') + 1);
    return auth;
  }
  throw Error::usage(fmt::format("the push credentials file {} is not understood", path),
                     "its first line must be 'bearer TOKEN' or 'basic USER:PASSWORD'",
                     "fix the file (see docs/live.md)");
}

// `option FILE` must be a readable file with a PEM block ("-----BEGIN ...").
void check_pem_file(std::string_view option, const std::string& path, std::string_view holds) {
  if (path.empty()) return;
  constexpr std::size_t kMaxPem = 16 * 1024 * 1024;  // a CA bundle is a few hundred KiB
  const auto text = util::read_small_file(path, kMaxPem);
  if (!text) {
    throw Error::usage(fmt::format("{} {} cannot be read", option, path), text.error().reason,
                       fmt::format("give the PEM file of {} (readable by this user)", holds));
  }
  if (text->find("-----BEGIN ") == std::string::npos) {
    throw Error::usage(fmt::format("{} {} is not a PEM file", option, path),
                       "it holds no '-----BEGIN ...' block",
                       fmt::format("give the PEM file of {} (openssl x509 -outform PEM converts "
                                   "a DER certificate)",
                                   holds));
  }
}

}  // namespace

void check_push_tls(const PushTls& tls) {
  if (!tls.key_file.empty() && tls.cert_file.empty()) {
    throw Error::usage("--push-key is given without --push-cert",
                       "a private key is of use only with its client certificate",
                       "add --push-cert FILE (the certificate the key belongs to), or drop "
                       "--push-key");
  }
  check_pem_file("--push-cert", tls.cert_file, "the client certificate");
  check_pem_file("--push-key", tls.key_file, "the client certificate's private key");
  check_pem_file("--push-ca", tls.ca_file, "the CA certificates that signed the server's");
}

std::string PushAuth::describe() const {
  switch (kind) {
    case Kind::Basic:
      return fmt::format("basic auth as {}", user);
    case Kind::Bearer:
      return "a bearer token";
    case Kind::None:
      break;
  }
  return "no credentials";
}

PushAuth load_push_auth(const std::string& auth_file, const EnvLookup& env) {
  std::string file = auth_file;
  if (file.empty()) file = env("GPUSCOPE_PUSH_AUTH_FILE").value_or("");
  const auto token = env("GPUSCOPE_PUSH_BEARER_TOKEN");
  const auto user = env("GPUSCOPE_PUSH_USER");
  const auto password = env("GPUSCOPE_PUSH_PASSWORD");
  const int sources = (file.empty() ? 0 : 1) + (token ? 1 : 0) + (user || password ? 1 : 0);
  if (sources > 1) {
    throw Error::usage("push credentials are given more than once",
                       "a credentials file, GPUSCOPE_PUSH_BEARER_TOKEN and "
                       "GPUSCOPE_PUSH_USER/PASSWORD are alternatives",
                       "keep one of them");
  }
  if (!file.empty()) return from_file(file);
  PushAuth auth;
  if (token) {
    auth.kind = PushAuth::Kind::Bearer;
    auth.secret = *token;
  } else if (user || password) {
    if (!user || !password) {
      throw Error::usage("GPUSCOPE_PUSH_USER and GPUSCOPE_PUSH_PASSWORD go together", {},
                         "set both, or neither");
    }
    auth.kind = PushAuth::Kind::Basic;
    auth.user = *user;
    auth.secret = *password;
  }
  return auth;
}

}  // namespace gpuscope::exporter
