// The TLS side of `serve --web-config`: an OpenSSL context made from tls_server_config, each new
// connection's bufferevent, and the certificate re-read when its files change.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "export/web_config.hpp"

struct bufferevent;
struct event_base;
struct ssl_ctx_st;

namespace gpuscope::exporter {

class TlsContext {
 public:
  // Loads the libraries and makes the context. Throws Error (exit 2) naming the file and what is
  // wrong: a certificate or key that cannot be read or parsed, a key that does not match the
  // certificate, a certificate that has expired or is not valid yet, a client CA file that cannot
  // be read. Appends to `notes` what the user should know (a key file others may read, a
  // certificate that expires within a week).
  TlsContext(TlsServerConfig config, std::vector<std::string>& notes);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // A bufferevent that accepts TLS on the connection evhttp gives it, with the current
  // certificate. At most once a second, the files are looked at first: when they changed, a new
  // context is made from them; if that fails, the old one stays and the reason is said once on
  // stderr. Called on the server's event thread only.
  bufferevent* new_connection(event_base* base);

  // Handshakes that ended with a fatal alert, sent or received (a client without the required
  // certificate, one that does not trust ours, a protocol or cipher it does not share).
  std::uint64_t handshake_failures() const { return handshake_failures_.load(); }
  // Times the certificate was replaced after its files changed.
  std::uint64_t reloads() const { return reloads_; }

  // The signature (inode, size, modification time) of the files; public for the callback.
  struct FileState {
    std::uint64_t inode = 0;
    std::int64_t size = -1;
    std::int64_t mtime_ns = 0;
    bool operator==(const FileState&) const = default;
  };
  void count_failure() { ++handshake_failures_; }

 private:
  std::vector<FileState> file_states() const;
  void maybe_reload();

  TlsServerConfig config_;
  ssl_ctx_st* ctx_ = nullptr;
  std::vector<FileState> loaded_;   // the files the context was made from
  std::vector<FileState> refused_;  // the files a reload last refused (said once)
  std::chrono::steady_clock::time_point checked_{};
  std::atomic<std::uint64_t> handshake_failures_{0};
  std::uint64_t reloads_ = 0;
};

}  // namespace gpuscope::exporter
