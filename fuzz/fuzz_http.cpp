// libFuzzer target: the exporter's request handling (`gpuscope serve`'s /metrics, /healthz and
// /). One MetricsServer listens on a loopback port for the whole run; each input is sent as raw
// bytes over a new connection (any method, path, headers, body or garbage) and its sending side
// closed, the answer read until the server closes too or 100 ms pass, and the server must then
// still answer GET /healthz: a request that crashes, hangs or wedges the server is a finding.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "export/exposition.hpp"
#include "export/latest_values.hpp"
#include "export/metrics_server.hpp"

namespace {

using namespace gpuscope::exporter;

// A port nobody listens on right now (the kernel's choice).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    std::abort();
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  // Closed with a reset, not FIN: thousands of connections a second would otherwise leave the
  // client's ephemeral ports in TIME_WAIT until connect() fails (a harness fault, not a finding).
  const linger reset{1, 0};
  if (fd < 0 || ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  return fd;
}

// Sends `bytes`, closes the sending side and reads what comes back until EOF or `timeout_ms`.
std::string exchange(int port, const char* bytes, std::size_t size, int timeout_ms) {
  const int fd = connect_to(port);
  if (fd < 0) return {};
  std::size_t sent = 0;
  while (sent < size) {
    const ssize_t n = ::send(fd, bytes + sent, size - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may close early on a bad request: that is an answer
    sent += static_cast<std::size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  std::string reply;
  char buffer[4096];
  pollfd poll_fd{fd, POLLIN, 0};
  while (::poll(&poll_fd, 1, timeout_ms) > 0) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    reply.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return reply;
}

struct Server {
  Server()
      : values(gpus()),
        cache(values, Exposition(Naming::Gpuscope, ExportLabels{"fuzz", {}, ""}, gpus())),
        port(free_port()),
        server(ListenAddress{"127.0.0.1", port}, cache) {
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Server* const server = new Server();  // for the whole run, as `serve` is
  (void)exchange(server->port, reinterpret_cast<const char*>(data), size, 100);
  static const std::string kHealth = "GET /healthz HTTP/1.1\r\nHost: fuzz\r\n\r\n";
  std::string health;
  for (int attempt = 0; attempt < 3 && health.empty(); ++attempt) {
    health = exchange(server->port, kHealth.data(), kHealth.size(), 5000);
  }
  if (health.rfind("HTTP/1.1 200", 0) != 0) {
    // On stdout: the runs close stderr (libevent warns of every malformed request there).
    std::printf("fuzz_http: after this input /healthz answers '%.60s'\n", health.c_str());
    std::fflush(stdout);
    std::abort();
  }
  return 0;
}
