#include "export/tls_context.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdio>
#include <ctime>
#include <stdexcept>

#include "core/error.hpp"
#include "export/tls_library.hpp"

namespace gpuscope::exporter {
namespace {

constexpr auto kCheckEvery = std::chrono::seconds(1);
constexpr int kExpiryWarningDays = 7;

// Why a context could not be made; the caller words it for start-up or for a reload.
struct Refused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Handshakes ending with a fatal alert, sent (we refused the client) or received (it refused us).
void on_info(const SSL* ssl, int where, int ret) {
  if ((where & SSL_CB_ALERT) == 0 || ((ret >> 8) & 0xff) != SSL3_AL_FATAL) return;
  const TlsLibrary& tls = tls_library();
  auto* self = static_cast<TlsContext*>(tls.ctx_get_ex_data(tls.get_ssl_ctx(ssl), 0));
  if (self != nullptr) self->count_failure();
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

void set_client_auth(const TlsLibrary& tls, SSL_CTX* ctx, const TlsServerConfig& config) {
  if (!config.client_ca_file.empty()) {
    if (tls.load_verify_locations(ctx, config.client_ca_file.c_str(), nullptr) != 1) {
      throw Refused(fmt::format("cannot read the client CA file {}: {}", config.client_ca_file,
                                tls_errors(tls, "no certificate in it")));
    }
    if (STACK_OF(X509_NAME)* names = tls.load_client_ca_file(config.client_ca_file.c_str())) {
      tls.set_client_ca_list(ctx, names);
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

// A context from `config`'s files; throws Refused saying why.
SSL_CTX* make_context(const TlsServerConfig& config, TlsContext* owner,
                      std::vector<std::string>* notes) {
  const TlsLibrary& tls = tls_library();
  tls.err_clear_error();
  SSL_CTX* ctx = tls.ctx_new(tls.server_method());
  if (ctx == nullptr) throw Refused(tls_errors(tls, "OpenSSL could not make a context"));
  try {
    if (tls.use_certificate_chain_file(ctx, config.cert_file.c_str()) != 1) {
      throw Refused(fmt::format("cannot read the certificate {}: {}", config.cert_file,
                                tls_errors(tls, "not a PEM certificate")));
    }
    if (tls.use_private_key_file(ctx, config.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
      const std::string why = tls_errors(tls, "not a PEM private key");
      if (why.find("mismatch") != std::string::npos) {
        throw Refused(fmt::format("the key {} does not match the certificate {}", config.key_file,
                                  config.cert_file));
      }
      throw Refused(fmt::format("cannot read the private key {}: {}", config.key_file, why));
    }
    if (tls.check_private_key(ctx) != 1) {
      tls.err_clear_error();
      throw Refused(fmt::format("the key {} does not match the certificate {}", config.key_file,
                                config.cert_file));
    }
    check_dates(tls, ctx, config, notes);
    set_client_auth(tls, ctx, config);
    set_protocols(tls, ctx, config);
  } catch (...) {
    tls.ctx_free(ctx);
    throw;
  }
  tls.ctx_set_ex_data(ctx, 0, owner);
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

TlsContext::TlsContext(TlsServerConfig config, std::vector<std::string>& notes)
    : config_(std::move(config)) {
  struct stat st {};
  if (stat(config_.key_file.c_str(), &st) == 0 && (st.st_mode & S_IROTH) != 0) {
    notes.push_back(
        fmt::format("warning: the TLS key {} may be read by every user (mode {:o}); "
                    "chmod 600 it",
                    config_.key_file, st.st_mode & 0777));
  }
  loaded_ = file_states();
  try {
    ctx_ = make_context(config_, this, &notes);
  } catch (const Refused& why) {
    throw Error::usage("serve cannot use TLS", why.what(),
                       "fix tls_server_config's files (docs/exporters.md, \"Security\")");
  }
  checked_ = std::chrono::steady_clock::now();
}

TlsContext::~TlsContext() {
  if (ctx_ != nullptr) tls_library().ctx_free(ctx_);
}

std::vector<TlsContext::FileState> TlsContext::file_states() const {
  return {state_of(config_.cert_file), state_of(config_.key_file),
          state_of(config_.client_ca_file)};
}

void TlsContext::maybe_reload() {
  const auto now = std::chrono::steady_clock::now();
  if (now - checked_ < kCheckEvery) return;
  checked_ = now;
  const auto states = file_states();
  if (states == loaded_ || states == refused_) return;
  try {
    SSL_CTX* fresh = make_context(config_, this, nullptr);
    tls_library().ctx_free(ctx_);  // connections in flight hold their own reference
    ctx_ = fresh;
    loaded_ = states;
    refused_.clear();
    ++reloads_;
    std::fprintf(stderr, "gpuscope: serve: TLS certificate %s re-read\n",
                 config_.cert_file.c_str());
  } catch (const Refused& why) {
    refused_ = states;
    std::fprintf(stderr,
                 "gpuscope: warning: serve: the changed TLS files were not taken (%s); the "
                 "previous certificate is still served\n",
                 why.what());
  }
}

bufferevent* TlsContext::new_connection(event_base* base) {
  maybe_reload();
  const TlsLibrary& tls = tls_library();
  SSL* ssl = tls.ssl_new(ctx_);
  if (ssl == nullptr) return nullptr;
  bufferevent* bev =
      tls.bufferevent_new(base, -1, ssl, BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
  if (bev != nullptr) tls.allow_dirty_shutdown(bev, 1);
  return bev;
}

}  // namespace gpuscope::exporter
