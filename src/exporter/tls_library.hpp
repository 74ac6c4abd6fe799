// OpenSSL and libevent's OpenSSL bufferevents, loaded with dlopen the first time a web config
// asks for TLS, so that `serve` without TLS maps none of them (docs/live.md, "Security").
// The headers give the types and constants; every call goes through this table.
#pragma once

#include <event2/bufferevent_ssl.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
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
  decltype(&::SSL_CTX_use_certificate) use_certificate;
  decltype(&::SSL_CTX_use_PrivateKey) use_private_key;
  decltype(&::SSL_CTX_check_private_key) check_private_key;
  decltype(&::SSL_CTX_get0_certificate) get0_certificate;
  decltype(&::SSL_CTX_set_cipher_list) set_cipher_list;
  decltype(&::SSL_CTX_set_verify) set_verify;
  decltype(&::SSL_CTX_get_cert_store) get_cert_store;
  decltype(&::SSL_CTX_add_client_CA) add_client_ca;
  decltype(&::SSL_CTX_set_info_callback) set_info_callback;
  decltype(&::SSL_CTX_set_ex_data) ctx_set_ex_data;
  decltype(&::SSL_CTX_get_ex_data) ctx_get_ex_data;
  decltype(&::SSL_get_SSL_CTX) get_ssl_ctx;
  decltype(&::SSL_new) ssl_new;
  // libcrypto (the files are read by gpuscope, never opened by OpenSSL: PEM from memory)
  decltype(&::BIO_new_mem_buf) bio_new_mem_buf;
  decltype(&::BIO_free) bio_free;
  decltype(&::PEM_read_bio_X509_AUX) pem_read_x509_aux;
  decltype(&::PEM_read_bio_X509) pem_read_x509;
  decltype(&::PEM_read_bio_PrivateKey) pem_read_private_key;
  decltype(&::X509_free) x509_free;
  decltype(&::EVP_PKEY_free) pkey_free;
  decltype(&::X509_STORE_add_cert) store_add_cert;
  decltype(&::ERR_peek_last_error) err_peek_last_error;
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
