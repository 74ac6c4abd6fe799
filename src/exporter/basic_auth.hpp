// Basic authentication for `serve --web-config` (basic_auth_users): bcrypt hashes checked with
// the system's crypt library (libxcrypt's crypt_rn, which knows $2a$, $2b$ and $2y$), loaded with
// dlopen only when a web config has users. The checks run on a small pool of worker threads,
// never on the server's event loop (docs/live.md, "Basic authentication").
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "exporter/sha256.hpp"

namespace gpuscope::exporter {

// The user and password of an `Authorization: Basic …` header; nullopt when the header is not
// that (another scheme, bad base64, no ':').
std::optional<std::pair<std::string, std::string>> parse_basic_authorization(
    std::string_view header);

struct BasicAuthLimits {
  unsigned workers = 2;         // threads that run bcrypt: at most this many cores spent on it
  std::size_t queue = 16;       // checks waiting or running; beyond: Busy at once
  std::size_t per_client = 2;   // of those, from one client address
  std::size_t remembered = 64;  // pairs that passed, kept (as keyed digests)
  std::size_t refused = 256;    // pairs that failed, kept so that a repeat costs no check
};

class BasicAuth {
 public:
  // Pending: the check was queued, and its verdict comes later (check's `later`). Busy: refused
  // without a check because the queue is full (the client may retry).
  enum class Verdict { Allowed, Missing, Wrong, Busy, Pending };

  // Throws Error when the crypt library cannot be loaded or cannot check bcrypt hashes, or when a
  // hash is not bcrypt or its cost is outside kMinBcryptCost..kMaxBcryptCost.
  explicit BasicAuth(std::map<std::string, std::string> users, BasicAuthLimits limits = {});
  ~BasicAuth();
  BasicAuth(const BasicAuth&) = delete;
  BasicAuth& operator=(const BasicAuth&) = delete;

  // The verdict on a request's Authorization header (null: none) from the client at `client`
  // (its address). Never runs bcrypt itself: a user and password already checked are answered
  // from memory (a keyed SHA-256 digest of the pair, never the password); a new pair is queued
  // for a worker and Pending is returned, and `later` is then called exactly once, on a worker
  // thread, with Allowed or Wrong (or Busy when stop() drops the check). A full queue, or
  // `per_client` checks of this client already queued, answers Busy at once. An unknown user
  // costs a check too, so its answer takes as long as a wrong password's.
  Verdict check(const char* authorization, const std::string& client,
                std::function<void(Verdict)> later);

  // check() that waits for a queued check's verdict (tests).
  Verdict check_now(const char* authorization, const std::string& client = "");

  // Ends the workers after their current check; checks still queued get Busy. Idempotent.
  void stop();

  // Requests refused (Missing, Wrong or Busy).
  std::uint64_t failures() const { return failures_.load(); }
  // Requests refused as Busy (no check run).
  std::uint64_t busy() const { return busy_.load(); }
  // bcrypt checks run.
  std::uint64_t checks() const { return checks_.load(); }

 private:
  struct Job {
    std::string user;
    std::string password;
    std::string client;
    Sha256Digest key;
    std::function<void(Verdict)> later;
  };
  struct Crypt;

  std::optional<Verdict> remembered(const Sha256Digest& key);
  void remember(const Sha256Digest& key, bool passed);
  void work();
  bool verify(const std::string& password, const std::string& hash, void* data);
  Verdict refuse(Verdict v);

  std::map<std::string, std::string> users_;
  BasicAuthLimits limits_;
  std::unique_ptr<Crypt> crypt_;
  std::string secret_;  // the key of the digests, random for each process

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> queue_;
  std::size_t running_ = 0;
  std::map<std::string, std::size_t> per_client_;  // queued or running, by client
  bool stopping_ = false;
  std::set<Sha256Digest> passed_;
  std::set<Sha256Digest> failed_;
  std::deque<Sha256Digest> failed_order_;  // oldest first, to forget
  std::vector<std::thread> workers_;

  std::atomic<std::uint64_t> failures_{0};
  std::atomic<std::uint64_t> busy_{0};
  std::atomic<std::uint64_t> checks_{0};
};

}  // namespace gpuscope::exporter
