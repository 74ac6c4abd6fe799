// The TLS side of `serve --web-config`: an OpenSSL context made from tls_server_config, each new
// connection's bufferevent, and the certificate re-read when its files change.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exporter/web_config.hpp"

struct bufferevent;
struct event_base;
struct ssl_ctx_st;

namespace gpuscope::exporter {

class TlsContext {
 public:
  // Loads the libraries and makes the context. Throws Error (exit 2) naming the file and what is
  // wrong: a certificate or key that cannot be read or parsed (a FIFO, a device or a directory is
  // refused, never opened in a way that could block), a key that does not match the
  // certificate, a certificate that has expired or is not valid yet, a client CA file that
  // cannot be read. Appends to `notes` what the user should know (a key file others may read, a
  // certificate that expires within a week). Then starts the thread that watches the files.
  TlsContext(TlsServerConfig config, std::vector<std::string>& notes);
  // Stops the watcher: waits for it at most 2 s (a file system that hangs may hold it in a
  // read), then leaves it to end with the process.
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // A bufferevent that accepts TLS on the connection evhttp gives it, with the current
  // certificate. Touches no file: a watcher thread looks at the files once a second and, when
  // they changed, reads them (regular files only, opened without blocking) and makes a new
  // context; if that fails, the old one stays and the reason is said once on stderr. Called on
  // the server's event thread.
  bufferevent* new_connection(event_base* base);

  // Handshakes that ended with a fatal alert, sent or received (a client without the required
  // certificate, one that does not trust ours, a protocol or cipher it does not share).
  std::uint64_t handshake_failures() const;
  // Times the certificate was replaced after its files changed.
  std::uint64_t reloads() const;

  // The signature (inode, size, modification time) of the files.
  struct FileState {
    std::uint64_t inode = 0;
    std::int64_t size = -1;
    std::int64_t mtime_ns = 0;
    bool operator==(const FileState&) const = default;
  };
  // What the context and its watcher thread share (tls_context.cpp).
  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace gpuscope::exporter
