#include "exporter/tls_context.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "core/error.hpp"
#include "exporter/tls_library.hpp"
#include "util/small_file.hpp"

namespace gpuscope::exporter {
namespace {

constexpr auto kCheckEvery = std::chrono::seconds(1);
constexpr auto kStopWait = std::chrono::seconds(2);
constexpr int kExpiryWarningDays = 7;
constexpr std::size_t kMaxPemBytes = std::size_t{1} << 20;

// Why a context could not be made; the caller words it for start-up or for a reload.
struct Refused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Handshakes ending with a fatal alert, sent (we refused the client) or received (it refused us).
void on_info(const SSL* ssl, int where, int ret) {
  if ((where & SSL_CB_ALERT) == 0 || ((ret >> 8) & 0xff) != SSL3_AL_FATAL) return;
  const TlsLibrary& tls = tls_library();
  auto* failures =
      static_cast<std::atomic<std::uint64_t>*>(tls.ctx_get_ex_data(tls.get_ssl_ctx(ssl), 0));
  if (failures != nullptr) ++*failures;
}

// Accepts any client certificate: RequestClientCert and RequireAnyClientCert verify nothing.
int accept_any(int, X509_STORE_CTX*) {
  return 1;
}

std::string date_of(const TlsLibrary& tls, const ASN1_TIME* time) {
  std::tm tm{};
  if (tls.asn1_time_to_tm(time, &tm) != 1) return "an unreadable date";
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M UTC", &tm);
  return text;
}

void check_dates(const TlsLibrary& tls, SSL_CTX* ctx, const TlsServerConfig& config,
                 std::vector<std::string>* notes) {
  X509* cert = tls.get0_certificate(ctx);
  if (cert == nullptr) throw Refused(fmt::format("{} holds no certificate", config.cert_file));
  const ASN1_TIME* after = tls.not_after(cert);
  const ASN1_TIME* before = tls.not_before(cert);
  if (tls.cmp_current_time(after) < 0) {
    throw Refused(fmt::format("the certificate in {} expired on {}; renew it", config.cert_file,
                              date_of(tls, after)));
  }
  if (tls.cmp_current_time(before) > 0) {
    throw Refused(
        fmt::format("the certificate in {} is not valid before {}; check the clock or "
                    "the certificate",
                    config.cert_file, date_of(tls, before)));
  }
  const std::time_t soon = std::time(nullptr) + kExpiryWarningDays * 86400;
  std::tm tm{};
  if (notes != nullptr && tls.asn1_time_to_tm(after, &tm) == 1 && timegm(&tm) < soon) {
    notes->push_back(
        fmt::format("the TLS certificate {} expires on {}: renew it (gpuscope "
                    "re-reads it when the file changes)",
                    config.cert_file, date_of(tls, after)));
  }
}

// The files' PEM text, read by gpuscope: regular files only, opened with O_NONBLOCK, so a FIFO
// or a device put in a certificate's place is refused instead of blocking (OpenSSL's own file
// reading would wait on a FIFO for ever).
struct Pem {
  std::string cert;
  std::string key;
  std::string client_ca;
};

std::string read_pem(const std::string& path, const char* what) {
  auto text = util::read_small_file(path, kMaxPemBytes);
  if (!text)
    throw Refused(fmt::format("cannot read the {} {}: {}", what, path, text.error().reason));
  return std::move(*text);
}

Pem read_pem_files(const TlsServerConfig& config) {
  Pem pem;
  pem.cert = read_pem(config.cert_file, "certificate");
  pem.key = read_pem(config.key_file, "private key");
  if (!config.client_ca_file.empty())
    pem.client_ca = read_pem(config.client_ca_file, "client CA file");
  return pem;
}

// An encrypted key is refused rather than asked for on a terminal.
int no_passphrase(char*, int, int, void*) {
  return 0;
}

// A memory BIO over `text`, freed at scope exit.
class MemoryBio {
 public:
  MemoryBio(const TlsLibrary& tls, const std::string& text)
      : tls_(tls), bio_(tls.bio_new_mem_buf(text.data(), static_cast<int>(text.size()))) {
    if (bio_ == nullptr) throw Refused("OpenSSL is out of memory");
  }
  ~MemoryBio() { tls_.bio_free(bio_); }
  MemoryBio(const MemoryBio&) = delete;
  MemoryBio& operator=(const MemoryBio&) = delete;
  BIO* get() const { return bio_; }

 private:
  const TlsLibrary& tls_;
  BIO* bio_;
};

// Whether the PEM reader stopped because no block was left (the end), not on a broken one.
bool at_end(const TlsLibrary& tls) {
  const unsigned long last = tls.err_peek_last_error();
  const bool end = last == 0 || (ERR_GET_LIB(last) == ERR_LIB_PEM &&
                                 ERR_GET_REASON(last) == PEM_R_NO_START_LINE);
  if (end) tls.err_clear_error();
  return end;
}

// The certificate and the chain after it, as SSL_CTX_use_certificate_chain_file reads a file.
void use_chain(const TlsLibrary& tls, SSL_CTX* ctx, const std::string& text,
               const std::string& path) {
  const MemoryBio bio(tls, text);
  X509* leaf = tls.pem_read_x509_aux(bio.get(), nullptr, &no_passphrase, nullptr);
  const bool used = leaf != nullptr && tls.use_certificate(ctx, leaf) == 1;
  if (leaf != nullptr) tls.x509_free(leaf);
  if (!used) {
    throw Refused(fmt::format("cannot read the certificate {}: {}", path,
                              tls_errors(tls, "not a PEM certificate")));
  }
  while (X509* next = tls.pem_read_x509(bio.get(), nullptr, &no_passphrase, nullptr)) {
    if (tls.ctx_ctrl(ctx, SSL_CTRL_CHAIN_CERT, 0, next) != 1) {  // takes it when it succeeds
      tls.x509_free(next);
      throw Refused(fmt::format("cannot use the chain in {}: {}", path,
                                tls_errors(tls, "OpenSSL refused a certificate")));
    }
  }
  if (!at_end(tls)) {
    throw Refused(fmt::format("cannot read the chain in {}: {}", path,
                              tls_errors(tls, "a broken PEM block")));
  }
}

void use_key(const TlsLibrary& tls, SSL_CTX* ctx, const std::string& text,
             const TlsServerConfig& config) {
  const MemoryBio bio(tls, text);
  EVP_PKEY* key = tls.pem_read_private_key(bio.get(), nullptr, &no_passphrase, nullptr);
  if (key == nullptr) {
    throw Refused(fmt::format(
        "cannot read the private key {}: {}", config.key_file,
        tls_errors(tls, "not a PEM private key (a key with a passphrase cannot be used)")));
  }
  const bool used = tls.use_private_key(ctx, key) == 1;
  tls.pkey_free(key);
  if (!used) {
    const std::string why = tls_errors(tls, "OpenSSL refused it");
    if (why.find("mismatch") != std::string::npos) {
      throw Refused(fmt::format("the key {} does not match the certificate {}", config.key_file,
                                config.cert_file));
    }
    throw Refused(fmt::format("cannot use the private key {}: {}", config.key_file, why));
  }
}

void set_client_auth(const TlsLibrary& tls, SSL_CTX* ctx, const TlsServerConfig& config,
                     const std::string& client_ca) {
  if (!config.client_ca_file.empty()) {
    const MemoryBio bio(tls, client_ca);
    X509_STORE* store = tls.get_cert_store(ctx);
    int count = 0;
    while (X509* ca = tls.pem_read_x509(bio.get(), nullptr, &no_passphrase, nullptr)) {
      const bool added = tls.store_add_cert(store, ca) == 1 && tls.add_client_ca(ctx, ca) == 1;
      tls.x509_free(ca);
      if (!added) break;
      ++count;
    }
    if (count == 0 || !at_end(tls)) {
      throw Refused(fmt::format("cannot read the client CA file {}: {}", config.client_ca_file,
                                tls_errors(tls, "no certificate in it")));
    }
  }
  switch (config.client_auth) {
    case ClientAuth::NoClientCert:
      tls.set_verify(ctx, SSL_VERIFY_NONE, nullptr);
      break;
    case ClientAuth::RequestClientCert:
      tls.set_verify(ctx, SSL_VERIFY_PEER, &accept_any);
      break;
    case ClientAuth::RequireAnyClientCert:
      tls.set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, &accept_any);
      break;
    case ClientAuth::VerifyClientCertIfGiven:
      tls.set_verify(ctx, SSL_VERIFY_PEER, nullptr);
      break;
    case ClientAuth::RequireAndVerifyClientCert:
      tls.set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      break;
  }
}

void set_protocols(const TlsLibrary& tls, SSL_CTX* ctx, const TlsServerConfig& config) {
  tls.ctx_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, config.min_version, nullptr);
  if (config.max_version != 0) {
    tls.ctx_ctrl(ctx, SSL_CTRL_SET_MAX_PROTO_VERSION, config.max_version, nullptr);
  }
  if (!config.cipher_list.empty() && tls.set_cipher_list(ctx, config.cipher_list.c_str()) != 1) {
    throw Refused(fmt::format("OpenSSL offers none of the cipher suites asked for: {}",
                              tls_errors(tls, config.cipher_list)));
  }
  if (!config.groups.empty() && tls.ctx_ctrl(ctx, SSL_CTRL_SET_GROUPS_LIST, 0,
                                             const_cast<char*>(config.groups.c_str())) != 1) {
    throw Refused(fmt::format("OpenSSL refused the curves {}: {}", config.groups,
                              tls_errors(tls, "unknown group")));
  }
  std::uint64_t options = SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION;
  if (config.prefer_server_cipher_suites) options |= SSL_OP_CIPHER_SERVER_PREFERENCE;
  tls.ctx_set_options(ctx, options);
}

// A context from `config`'s files; throws Refused saying why. `failures` counts the handshakes
// that end with a fatal alert.
SSL_CTX* make_context(const TlsServerConfig& config, std::atomic<std::uint64_t>* failures,
                      std::vector<std::string>* notes) {
  const Pem pem = read_pem_files(config);
  const TlsLibrary& tls = tls_library();
  tls.err_clear_error();
  SSL_CTX* ctx = tls.ctx_new(tls.server_method());
  if (ctx == nullptr) throw Refused(tls_errors(tls, "OpenSSL could not make a context"));
  try {
    use_chain(tls, ctx, pem.cert, config.cert_file);
    use_key(tls, ctx, pem.key, config);
    if (tls.check_private_key(ctx) != 1) {
      tls.err_clear_error();
      throw Refused(fmt::format("the key {} does not match the certificate {}", config.key_file,
                                config.cert_file));
    }
    check_dates(tls, ctx, config, notes);
    set_client_auth(tls, ctx, config, pem.client_ca);
    set_protocols(tls, ctx, config);
  } catch (...) {
    tls.ctx_free(ctx);
    throw;
  }
  tls.ctx_set_ex_data(ctx, 0, failures);
  tls.set_info_callback(ctx, &on_info);
  return ctx;
}

TlsContext::FileState state_of(const std::string& path) {
  struct stat st {};
  if (path.empty() || stat(path.c_str(), &st) != 0) return {};
  return {static_cast<std::uint64_t>(st.st_ino), static_cast<std::int64_t>(st.st_size),
          static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

}  // namespace

struct TlsContext::State {
  TlsServerConfig config;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  bool finished = false;
  SSL_CTX* ctx = nullptr;          // under mutex
  std::vector<FileState> loaded;   // the files the context was made from (watcher only)
  std::vector<FileState> refused;  // the files a reload last refused, said once (watcher only)
  std::atomic<std::uint64_t> handshake_failures{0};
  std::atomic<std::uint64_t> reloads{0};

  ~State() {
    if (ctx != nullptr) tls_library().ctx_free(ctx);
  }
  std::vector<FileState> file_states() const {
    return {state_of(config.cert_file), state_of(config.key_file), state_of(config.client_ca_file)};
  }
};

namespace {

// The watcher: once a second, the files' signatures; when they changed, a new context from them.
// Off the event loop, so a file that blocks (a hung network file system) stalls only this thread,
// and the previous certificate is served meanwhile.
void maybe_reload(TlsContext::State& state) {
  const auto states = state.file_states();
  if (states == state.loaded || states == state.refused) return;
  try {
    SSL_CTX* fresh = make_context(state.config, &state.handshake_failures, nullptr);
    SSL_CTX* old = nullptr;
    {
      std::lock_guard lock(state.mutex);
      old = state.ctx;
      state.ctx = fresh;
    }
    tls_library().ctx_free(old);  // connections in flight hold their own reference
    state.loaded = states;
    state.refused.clear();
    ++state.reloads;
    std::fprintf(stderr, "gpuscope: serve: TLS certificate %s re-read\n",
                 state.config.cert_file.c_str());
  } catch (const Refused& why) {
    state.refused = states;
    std::fprintf(stderr,
                 "gpuscope: warning: serve: the changed TLS files were not taken (%s); the "
                 "previous certificate is still served\n",
                 why.what());
  } catch (const std::exception& e) {  // out of memory
    state.refused = states;
    std::fprintf(stderr, "gpuscope: warning: serve: the TLS files were not re-read (%s)\n",
                 e.what());
  }
}

void watch(const std::shared_ptr<TlsContext::State>& state) {
  std::unique_lock lock(state->mutex);
  while (!state->wake.wait_for(lock, kCheckEvery, [&] { return state->stopping; })) {
    lock.unlock();
    maybe_reload(*state);
    lock.lock();
  }
  state->finished = true;
  state->wake.notify_all();
}

}  // namespace

TlsContext::TlsContext(TlsServerConfig config, std::vector<std::string>& notes)
    : state_(std::make_shared<State>()) {
  state_->config = std::move(config);
  const TlsServerConfig& c = state_->config;
  struct stat st {};
  if (stat(c.key_file.c_str(), &st) == 0 && (st.st_mode & S_IROTH) != 0) {
    notes.push_back(
        fmt::format("warning: the TLS key {} may be read by every user (mode {:o}); "
                    "chmod 600 it",
                    c.key_file, st.st_mode & 0777));
  }
  state_->loaded = state_->file_states();
  try {
    state_->ctx = make_context(c, &state_->handshake_failures, &notes);
  } catch (const Refused& why) {
    throw Error::usage("serve cannot use TLS", why.what(),
                       "fix tls_server_config's files (docs/live.md, \"Security\")");
  }
  std::thread([state = state_] { watch(state); }).detach();
}

TlsContext::~TlsContext() {
  std::unique_lock lock(state_->mutex);
  state_->stopping = true;
  state_->wake.notify_all();
  // The watcher holds the state; if a read hangs, it ends with the process.
  state_->wake.wait_for(lock, kStopWait, [this] { return state_->finished; });
}

std::uint64_t TlsContext::handshake_failures() const {
  return state_->handshake_failures.load();
}

std::uint64_t TlsContext::reloads() const {
  return state_->reloads.load();
}

bufferevent* TlsContext::new_connection(event_base* base) {
  const TlsLibrary& tls = tls_library();
  SSL* ssl = nullptr;
  {
    std::lock_guard lock(state_->mutex);
    ssl = tls.ssl_new(state_->ctx);
  }
  if (ssl == nullptr) return nullptr;
  bufferevent* bev =
      tls.bufferevent_new(base, -1, ssl, BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
  if (bev != nullptr) tls.allow_dirty_shutdown(bev, 1);
  return bev;
}

}  // namespace gpuscope::exporter
