#include "exporter/tls_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <string>

#include "core/error.hpp"
#include "util/dynamic_library.hpp"

namespace gpuscope::exporter {
namespace {

constexpr const char* kPackages =
    "install OpenSSL 3 and libevent's OpenSSL support (Debian/Ubuntu: apt install libssl3 "
    "libevent-openssl-2.1-7; RHEL: dnf install openssl-libs libevent)";

void* open_one(const char* name) {
  const auto opened = util::dlopen_first({name});
  if (!opened.handle) {
    throw Error(fmt::format("serve's TLS needs {}, which could not be loaded", name), opened.error,
                kPackages);
  }
  return opened.handle;
}

template <typename F>
void bind(void* library, const char* library_name, const char* name, F& function) {
  function = reinterpret_cast<F>(dlsym(library, name));
  if (!function) {
    throw Error(fmt::format("the {} found has no {}", library_name, name),
                "it is not the OpenSSL 3 build libevent was made with", kPackages);
  }
}

TlsLibrary load() {
  // libevent_openssl first: it brings the libssl and libcrypto it was built against.
  void* event_ssl = open_one("libevent_openssl-2.1.so.7");
  void* ssl = open_one("libssl.so.3");
  void* crypto = open_one("libcrypto.so.3");
  TlsLibrary t{};
  bind(ssl, "libssl", "TLS_server_method", t.server_method);
  bind(ssl, "libssl", "SSL_CTX_new", t.ctx_new);
  bind(ssl, "libssl", "SSL_CTX_free", t.ctx_free);
  bind(ssl, "libssl", "SSL_CTX_ctrl", t.ctx_ctrl);
  bind(ssl, "libssl", "SSL_CTX_set_options", t.ctx_set_options);
  bind(ssl, "libssl", "SSL_CTX_use_certificate", t.use_certificate);
  bind(ssl, "libssl", "SSL_CTX_use_PrivateKey", t.use_private_key);
  bind(ssl, "libssl", "SSL_CTX_check_private_key", t.check_private_key);
  bind(ssl, "libssl", "SSL_CTX_get0_certificate", t.get0_certificate);
  bind(ssl, "libssl", "SSL_CTX_set_cipher_list", t.set_cipher_list);
  bind(ssl, "libssl", "SSL_CTX_set_verify", t.set_verify);
  bind(ssl, "libssl", "SSL_CTX_get_cert_store", t.get_cert_store);
  bind(ssl, "libssl", "SSL_CTX_add_client_CA", t.add_client_ca);
  bind(ssl, "libssl", "SSL_CTX_set_info_callback", t.set_info_callback);
  bind(ssl, "libssl", "SSL_CTX_set_ex_data", t.ctx_set_ex_data);
  bind(ssl, "libssl", "SSL_CTX_get_ex_data", t.ctx_get_ex_data);
  bind(ssl, "libssl", "SSL_get_SSL_CTX", t.get_ssl_ctx);
  bind(ssl, "libssl", "SSL_new", t.ssl_new);
  bind(crypto, "libcrypto", "BIO_new_mem_buf", t.bio_new_mem_buf);
  bind(crypto, "libcrypto", "BIO_free", t.bio_free);
  bind(crypto, "libcrypto", "PEM_read_bio_X509_AUX", t.pem_read_x509_aux);
  bind(crypto, "libcrypto", "PEM_read_bio_X509", t.pem_read_x509);
  bind(crypto, "libcrypto", "PEM_read_bio_PrivateKey", t.pem_read_private_key);
  bind(crypto, "libcrypto", "X509_free", t.x509_free);
  bind(crypto, "libcrypto", "EVP_PKEY_free", t.pkey_free);
  bind(crypto, "libcrypto", "X509_STORE_add_cert", t.store_add_cert);
  bind(crypto, "libcrypto", "ERR_peek_last_error", t.err_peek_last_error);
  bind(crypto, "libcrypto", "X509_get0_notAfter", t.not_after);
  bind(crypto, "libcrypto", "X509_get0_notBefore", t.not_before);
  bind(crypto, "libcrypto", "X509_cmp_current_time", t.cmp_current_time);
  bind(crypto, "libcrypto", "ASN1_TIME_to_tm", t.asn1_time_to_tm);
  bind(crypto, "libcrypto", "ERR_get_error", t.err_get_error);
  bind(crypto, "libcrypto", "ERR_error_string_n", t.err_error_string_n);
  bind(crypto, "libcrypto", "ERR_clear_error", t.err_clear_error);
  bind(event_ssl, "libevent_openssl", "bufferevent_openssl_socket_new", t.bufferevent_new);
  bind(event_ssl, "libevent_openssl", "bufferevent_openssl_set_allow_dirty_shutdown",
       t.allow_dirty_shutdown);
  return t;
}

}  // namespace

const TlsLibrary& tls_library() {
  static const TlsLibrary library = load();
  return library;
}

std::string tls_errors(const TlsLibrary& tls, const std::string& otherwise) {
  std::string text;
  while (const unsigned long code = tls.err_get_error()) {
    char buffer[256];
    tls.err_error_string_n(code, buffer, sizeof(buffer));
    text += (text.empty() ? "" : "; ") + std::string(buffer);
  }
  return text.empty() ? otherwise : text;
}

}  // namespace gpuscope::exporter
