// OpenSSL and libevent's OpenSSL bufferevents, loaded with dlopen the first time a web config
// asks for TLS, so that `serve` without TLS maps none of them (docs/exporters.md, "Security").
// The headers give the types and constants; every call goes through this table.
#pragma once

#include <event2/bufferevent_ssl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <string>

namespace gpuscope::exporter {

struct TlsLibrary {
  // libssl
  decltype(&::TLS_server_method) server_method;
  decltype(&::SSL_CTX_new) ctx_new;
  decltype(&::SSL_CTX_free) ctx_free;
  decltype(&::SSL_CTX_ctrl) ctx_ctrl;
  decltype(&::SSL_CTX_set_options) ctx_set_options;
  decltype(&::SSL_CTX_use_certificate_chain_file) use_certificate_chain_file;
  decltype(&::SSL_CTX_use_PrivateKey_file) use_private_key_file;
  decltype(&::SSL_CTX_check_private_key) check_private_key;
  decltype(&::SSL_CTX_get0_certificate) get0_certificate;
  decltype(&::SSL_CTX_set_cipher_list) set_cipher_list;
  decltype(&::SSL_CTX_set_verify) set_verify;
  decltype(&::SSL_CTX_load_verify_locations) load_verify_locations;
  decltype(&::SSL_load_client_CA_file) load_client_ca_file;
  decltype(&::SSL_CTX_set_client_CA_list) set_client_ca_list;
  decltype(&::SSL_CTX_set_info_callback) set_info_callback;
  decltype(&::SSL_CTX_set_ex_data) ctx_set_ex_data;
  decltype(&::SSL_CTX_get_ex_data) ctx_get_ex_data;
  decltype(&::SSL_get_SSL_CTX) get_ssl_ctx;
  decltype(&::SSL_new) ssl_new;
  // libcrypto
  decltype(&::X509_get0_notAfter) not_after;
  decltype(&::X509_get0_notBefore) not_before;
  decltype(&::X509_cmp_current_time) cmp_current_time;
  decltype(&::ASN1_TIME_to_tm) asn1_time_to_tm;
  decltype(&::ERR_get_error) err_get_error;
  decltype(&::ERR_error_string_n) err_error_string_n;
  decltype(&::ERR_clear_error) err_clear_error;
  // libevent_openssl
  decltype(&::bufferevent_openssl_socket_new) bufferevent_new;
  decltype(&::bufferevent_openssl_set_allow_dirty_shutdown) allow_dirty_shutdown;
};

// The table, loaded on first use. Throws Error naming the library that is missing and the
// package that has it.
const TlsLibrary& tls_library();

// OpenSSL's error queue as one line (emptied), or `otherwise` when it is empty.
std::string tls_errors(const TlsLibrary& tls, const std::string& otherwise);

}  // namespace gpuscope::exporter
