// Basic authentication for `serve --web-config` (basic_auth_users): bcrypt hashes checked with
// the system's crypt library (libxcrypt's crypt_rn, which knows $2a$, $2b$ and $2y$), loaded with
// dlopen only when a web config has users.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace gpuscope::exporter {

// The user and password of an `Authorization: Basic …` header; nullopt when the header is not
// that (another scheme, bad base64, no ':').
std::optional<std::pair<std::string, std::string>> parse_basic_authorization(
    std::string_view header);

class BasicAuth {
 public:
  enum class Verdict { Allowed, Missing, Wrong, Throttled };

  // Throws Error when the crypt library cannot be loaded or cannot check bcrypt hashes.
  explicit BasicAuth(std::map<std::string, std::string> users);
  ~BasicAuth();
  BasicAuth(const BasicAuth&) = delete;
  BasicAuth& operator=(const BasicAuth&) = delete;

  // The verdict on a request's Authorization header (null: none). A bcrypt check costs tens of
  // milliseconds, so credentials that passed are remembered (up to 64), and at most 16 new ones
  // are checked a second: beyond that a request is refused without a check (Throttled), so a
  // flood of wrong passwords cannot stall the server. An unknown user costs a check too, so its
  // answer takes as long as a wrong password's. Called on the server's thread only.
  Verdict check(const char* authorization);

  // Requests refused (Missing, Wrong or Throttled).
  std::uint64_t failures() const { return failures_.load(); }

 private:
  bool verify(const std::string& password, const std::string& hash);

  std::map<std::string, std::string> users_;
  struct Crypt;
  std::unique_ptr<Crypt> crypt_;
  std::set<std::string> passed_;  // "user:password" that passed
  std::chrono::steady_clock::time_point window_{};
  int checks_in_window_ = 0;
  std::atomic<std::uint64_t> failures_{0};
};

}  // namespace gpuscope::exporter
