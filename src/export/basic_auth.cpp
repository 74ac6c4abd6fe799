#include "export/basic_auth.hpp"

#include <crypt.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <array>
#include <cctype>
#include <cstring>

#include "core/error.hpp"
#include "util/dynamic_library.hpp"

namespace gpuscope::exporter {
namespace {

constexpr std::size_t kRemembered = 64;
constexpr int kChecksPerSecond = 16;

std::optional<std::string> base64_decode(std::string_view in) {
  static const auto table = [] {
    std::array<int, 256> t{};
    t.fill(-1);
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(alphabet[i])] = i;
    return t;
  }();
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  if (in.size() % 4 == 1) return std::nullopt;
  std::string out;
  unsigned bits = 0;
  int count = 0;
  for (const char c : in) {
    const int v = table[static_cast<unsigned char>(c)];
    if (v < 0) return std::nullopt;
    bits = (bits << 6) | static_cast<unsigned>(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xff));
    }
  }
  return out;
}

// Equal strings, in a time that does not depend on where they differ.
bool same(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

}  // namespace

std::optional<std::pair<std::string, std::string>> parse_basic_authorization(
    std::string_view header) {
  constexpr std::string_view kScheme = "Basic ";
  if (header.size() < kScheme.size()) return std::nullopt;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {  // the scheme is case-insensitive
    if (std::tolower(static_cast<unsigned char>(header[i])) !=
        std::tolower(static_cast<unsigned char>(kScheme[i]))) {
      return std::nullopt;
    }
  }
  header.remove_prefix(kScheme.size());
  while (!header.empty() && header.front() == ' ') header.remove_prefix(1);
  while (!header.empty() && header.back() == ' ') header.remove_suffix(1);
  const auto decoded = base64_decode(header);
  if (!decoded) return std::nullopt;
  const std::size_t colon = decoded->find(':');
  if (colon == std::string::npos) return std::nullopt;
  return std::make_pair(decoded->substr(0, colon), decoded->substr(colon + 1));
}

struct BasicAuth::Crypt {
  using CryptRn = char* (*)(const char*, const char*, void*, int);
  CryptRn crypt_rn = nullptr;
  crypt_data data{};
};

BasicAuth::BasicAuth(std::map<std::string, std::string> users)
    : users_(std::move(users)), crypt_(std::make_unique<Crypt>()) {
  const auto opened = util::dlopen_first({"libcrypt.so.1", "libcrypt.so.2"});
  if (!opened.handle) {
    throw Error("serve's basic authentication needs libcrypt, which could not be loaded",
                opened.error, "install libxcrypt (Debian/Ubuntu: apt install libcrypt1)");
  }
  crypt_->crypt_rn = reinterpret_cast<Crypt::CryptRn>(dlsym(opened.handle, "crypt_rn"));
  if (crypt_->crypt_rn == nullptr) {
    throw Error("the libcrypt found has no crypt_rn", "it is not libxcrypt",
                "install libxcrypt 4 (Debian/Ubuntu: apt install libcrypt1)");
  }
  // A crypt library without bcrypt would refuse every password: say so now, not at the first
  // scrape. The check uses the first user's hash, so it also proves that hash is well formed.
  if (!users_.empty()) {
    const std::string& hash = users_.begin()->second;
    std::memset(&crypt_->data, 0, sizeof(crypt_->data));
    if (crypt_->crypt_rn("probe", hash.c_str(), &crypt_->data, sizeof(crypt_->data)) == nullptr) {
      throw Error::usage(fmt::format("the crypt library cannot check the bcrypt hash of {}",
                                     users_.begin()->first),
                         "the hash is malformed, or this libcrypt has no bcrypt",
                         "make the hash again (htpasswd -nBC 10 USER) or install libxcrypt");
    }
  }
}

BasicAuth::~BasicAuth() = default;

bool BasicAuth::verify(const std::string& password, const std::string& hash) {
  std::memset(&crypt_->data, 0, sizeof(crypt_->data));
  const char* out =
      crypt_->crypt_rn(password.c_str(), hash.c_str(), &crypt_->data, sizeof(crypt_->data));
  const bool ok = out != nullptr && same(out, hash);
  std::memset(&crypt_->data, 0, sizeof(crypt_->data));  // no trace of the password
  return ok;
}

BasicAuth::Verdict BasicAuth::check(const char* authorization) {
  const auto refuse = [this](Verdict v) {
    ++failures_;
    return v;
  };
  if (authorization == nullptr) return refuse(Verdict::Missing);
  const auto credentials = parse_basic_authorization(authorization);
  if (!credentials) return refuse(Verdict::Missing);
  const auto& [user, password] = *credentials;
  const std::string key = user + ':' + password;
  if (passed_.count(key) != 0) return Verdict::Allowed;
  const auto now = std::chrono::steady_clock::now();
  if (now - window_ >= std::chrono::seconds(1)) {
    window_ = now;
    checks_in_window_ = 0;
  }
  if (++checks_in_window_ > kChecksPerSecond) return refuse(Verdict::Throttled);
  const auto found = users_.find(user);
  // An unknown user is checked against a known hash, and fails in the same time.
  const bool ok =
      verify(password, found != users_.end() ? found->second : users_.begin()->second) &&
      found != users_.end();
  if (!ok) return refuse(Verdict::Wrong);
  if (passed_.size() >= kRemembered) passed_.clear();
  passed_.insert(key);
  return Verdict::Allowed;
}

}  // namespace gpuscope::exporter
