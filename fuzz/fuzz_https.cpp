// libFuzzer target: `gpuscope serve --web-config` with TLS and basic authentication. One
// MetricsServer serves TLS on a loopback port for the whole run, with the certificate and key
// scripts/fuzz.sh makes (GPUSCOPE_FUZZ_TLS_DIR/server.crt, server.key). The first byte of an
// input picks what the rest is:
//   even: raw bytes on a new connection, before any handshake (a broken or hostile ClientHello);
//   odd:  bytes sent inside an established TLS session (requests, headers, Authorization values).
// Afterwards GET /healthz with the right credentials over TLS must still answer 200: an input
// that crashes, hangs or wedges the server is a finding.
#include <openssl/ssl.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "exporter/exposition.hpp"
#include "exporter/latest_values.hpp"
#include "exporter/metrics_server.hpp"
#include "fuzz_sockets.hpp"

namespace {

using namespace gpuscope::exporter;

// bcrypt of "hunter2" at cost 4, so that a right password costs little.
constexpr const char* kHash = "$2b$04$pedeqbPZXaD0nuKTEmWk1u6O3sure8qifxljFvlH9nhHWnYfFsuX6";
constexpr const char* kHealth =
    "GET /healthz HTTP/1.1\r\nHost: fuzz\r\nAuthorization: Basic cDpodW50ZXIy\r\n\r\n";  // p:hunter2

std::string tls_dir() {
  const char* dir = std::getenv("GPUSCOPE_FUZZ_TLS_DIR");
  if (dir == nullptr) {
    std::printf("fuzz_https: set GPUSCOPE_FUZZ_TLS_DIR (scripts/fuzz.sh does)\n");
    std::abort();
  }
  return dir;
}

ServerSecurity security() {
  TlsServerConfig tls;
  tls.cert_file = tls_dir() + "/server.crt";
  tls.key_file = tls_dir() + "/server.key";
  std::vector<std::string> notes;
  ServerSecurity s;
  s.tls = std::make_unique<TlsContext>(tls, notes);
  s.auth = std::make_unique<BasicAuth>(std::map<std::string, std::string>{{"p", kHash}});
  return s;
}

struct Server {
  Server()
      : values(gpus()),
        cache(values, Exposition(Naming::Gpuscope, ExportLabels{"fuzz", {}, ""}, gpus())),
        port(fuzz_sockets::free_port()),
        server(ListenAddress{"127.0.0.1", port}, cache, security()) {
    server.start();
  }
  static std::vector<GpuIdentity> gpus() {
    GpuIdentity gpu;
    gpu.uuid = "GPU-fuzz";
    gpu.name = "NVIDIA H100 80GB HBM3";
    return {gpu};
  }
  LatestValues values;
  ExpositionCache cache;
  int port;
  MetricsServer server;
};

// Sends `bytes` inside a TLS session on a new connection; what came back until the server closed
// or `timeout_ms` passed without data. Empty when the handshake failed.
std::string tls_exchange(int port, const char* bytes, std::size_t size, int timeout_ms) {
  static SSL_CTX* const client = SSL_CTX_new(TLS_client_method());  // trusts anything: a test
  const int fd = fuzz_sockets::connect_to(port);
  if (fd < 0) return {};
  timeval timeout{0, timeout_ms * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  SSL* ssl = SSL_new(client);
  SSL_set_fd(ssl, fd);
  std::string reply;
  if (SSL_connect(ssl) == 1) {
    if (size > 0) (void)SSL_write(ssl, bytes, static_cast<int>(size));
    char buffer[4096];
    for (int n; (n = SSL_read(ssl, buffer, sizeof buffer)) > 0;) {
      reply.append(buffer, static_cast<std::size_t>(n));
      if (reply.find("\r\n\r\nok\n") != std::string::npos) break;
    }
  }
  SSL_free(ssl);
  ::close(fd);
  return reply;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Server* const server = new Server();  // for the whole run, as `serve` is
  if (size == 0) return 0;
  const char* rest = reinterpret_cast<const char*>(data) + 1;
  if (data[0] % 2 == 0) {
    (void)fuzz_sockets::exchange(server->port, rest, size - 1, 100);
  } else {
    (void)tls_exchange(server->port, rest, size - 1, 100);
  }
  std::string health;
  for (int attempt = 0; attempt < 3 && health.rfind("HTTP/1.1 200", 0) != 0; ++attempt) {
    health = tls_exchange(server->port, kHealth, std::char_traits<char>::length(kHealth), 5000);
  }
  if (health.rfind("HTTP/1.1 200", 0) != 0) {
    std::printf("fuzz_https: after this input /healthz over TLS answers '%.60s'\n", health.c_str());
    std::fflush(stdout);
    std::abort();
  }
  return 0;
}
