#include "exporter/basic_auth.hpp"

#include <crypt.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <pthread.h>
#include <string.h>
#include <sys/random.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <future>

#include "core/error.hpp"
#include "exporter/web_config.hpp"
#include "util/dynamic_library.hpp"

namespace gpuscope::exporter {
namespace {

// bcrypt of "hunter2" at cost 4: proves at start that the crypt library checks bcrypt, in 1 ms.
constexpr const char* kProbeHash = "$2b$04$pedeqbPZXaD0nuKTEmWk1u6O3sure8qifxljFvlH9nhHWnYfFsuX6";
constexpr const char* kProbePassword = "hunter2";

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
};

BasicAuth::BasicAuth(std::map<std::string, std::string> users, BasicAuthLimits limits)
    : users_(std::move(users)), limits_(limits), crypt_(std::make_unique<Crypt>()) {
  // The hashes first: a cost past the bound would keep the first check (and start-up, when it
  // was probed) inside crypt for hours, deaf to SIGTERM (a $2b$31$ hash did).
  for (const auto& [user, hash] : users_) {
    const int cost = bcrypt_cost(hash);
    if (cost < kMinBcryptCost || cost > kMaxBcryptCost) {
      throw Error::usage(
          fmt::format("the password hash of {} is not a bcrypt hash of cost {} to {}", user,
                      kMinBcryptCost, kMaxBcryptCost),
          cost < 0 ? "it is not bcrypt" : fmt::format("its cost is {}", cost),
          "make the hash again (htpasswd -nBC 10 USER)");
    }
  }
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
  // scrape. The probe is a cost-4 hash, so it costs a millisecond whatever the users' costs.
  auto data = std::make_unique<crypt_data>();
  if (!verify(kProbePassword, kProbeHash, data.get())) {
    throw Error("the crypt library cannot check bcrypt hashes", "this libcrypt has no bcrypt",
                "install libxcrypt (Debian/Ubuntu: apt install libcrypt1)");
  }
  secret_.resize(32);
  if (getrandom(secret_.data(), secret_.size(), 0) != static_cast<ssize_t>(secret_.size())) {
    throw Error("serve cannot draw a random key for its credential cache", std::strerror(errno),
                "check that the kernel offers getrandom()");
  }
  if (users_.empty()) return;
  const unsigned count = std::max(1U, limits_.workers);
  for (unsigned i = 0; i < count; ++i) {
    workers_.emplace_back([this] { work(); });
    pthread_setname_np(workers_.back().native_handle(), "gpuscope-auth");
  }
}

BasicAuth::~BasicAuth() {
  stop();
  explicit_bzero(secret_.data(), secret_.size());
}

bool BasicAuth::verify(const std::string& password, const std::string& hash, void* data) {
  std::memset(data, 0, sizeof(crypt_data));
  const char* out =
      crypt_->crypt_rn(password.c_str(), hash.c_str(), data, static_cast<int>(sizeof(crypt_data)));
  const bool ok = out != nullptr && same(out, hash);
  explicit_bzero(data, sizeof(crypt_data));  // no trace of the password
  return ok;
}

BasicAuth::Verdict BasicAuth::refuse(Verdict v) {
  ++failures_;
  if (v == Verdict::Busy) ++busy_;
  return v;
}

std::optional<BasicAuth::Verdict> BasicAuth::remembered(const Sha256Digest& key) {
  if (passed_.count(key) != 0) return Verdict::Allowed;
  if (failed_.count(key) != 0) return Verdict::Wrong;
  return std::nullopt;
}

void BasicAuth::remember(const Sha256Digest& key, bool passed) {
  if (passed) {
    if (passed_.size() >= limits_.remembered) passed_.clear();
    passed_.insert(key);
    return;
  }
  // Failures are kept apart: wrong passwords, however many, never push out a pair that passed.
  if (!failed_.insert(key).second) return;
  failed_order_.push_back(key);
  while (failed_order_.size() > limits_.refused) {
    failed_.erase(failed_order_.front());
    failed_order_.pop_front();
  }
}

BasicAuth::Verdict BasicAuth::check(const char* authorization, const std::string& client,
                                    std::function<void(Verdict)> later) {
  if (authorization == nullptr) return refuse(Verdict::Missing);
  auto credentials = parse_basic_authorization(authorization);
  if (!credentials || users_.empty()) return refuse(Verdict::Missing);
  auto& [user, password] = *credentials;
  std::string pair = user + ':' + password;
  const Sha256Digest key = hmac_sha256(secret_, pair);
  explicit_bzero(pair.data(), pair.size());
  std::unique_lock lock(mutex_);
  if (const auto known = remembered(key)) {
    lock.unlock();
    return *known == Verdict::Allowed ? *known : refuse(*known);
  }
  const auto from = per_client_.find(client);
  if (stopping_ || queue_.size() + running_ >= limits_.queue ||
      (from != per_client_.end() && from->second >= limits_.per_client)) {
    lock.unlock();
    explicit_bzero(password.data(), password.size());
    return refuse(Verdict::Busy);
  }
  ++per_client_[client];
  queue_.push_back(Job{user, std::move(password), client, key, std::move(later)});
  lock.unlock();
  wake_.notify_one();
  return Verdict::Pending;
}

BasicAuth::Verdict BasicAuth::check_now(const char* authorization, const std::string& client) {
  auto promise = std::make_shared<std::promise<Verdict>>();
  auto future = promise->get_future();
  const Verdict now = check(authorization, client, [promise](Verdict v) { promise->set_value(v); });
  return now == Verdict::Pending ? future.get() : now;
}

void BasicAuth::work() {
  auto data = std::make_unique<crypt_data>();
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    Job job = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lock.unlock();
    // An unknown user is checked against a known hash, and fails in the same time.
    const auto found = users_.find(job.user);
    const bool ok =
        verify(job.password, found != users_.end() ? found->second : users_.begin()->second,
               data.get()) &&
        found != users_.end();
    explicit_bzero(job.password.data(), job.password.size());
    ++checks_;
    lock.lock();
    --running_;
    if (const auto from = per_client_.find(job.client); from != per_client_.end()) {
      if (--from->second == 0) per_client_.erase(from);
    }
    remember(job.key, ok);
    lock.unlock();
    job.later(ok ? Verdict::Allowed : refuse(Verdict::Wrong));
    lock.lock();
  }
}

void BasicAuth::stop() {
  std::deque<Job> dropped;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    dropped.swap(queue_);
    per_client_.clear();
  }
  wake_.notify_all();
  for (auto& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
  workers_.clear();
  for (auto& job : dropped) {
    explicit_bzero(job.password.data(), job.password.size());
    job.later(refuse(Verdict::Busy));
  }
}

}  // namespace gpuscope::exporter
