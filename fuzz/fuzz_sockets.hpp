// Loopback sockets for the exporter's fuzz targets (fuzz_http, fuzz_https).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace fuzz_sockets {

// A port nobody listens on right now (the kernel's choice).
inline int free_port() {
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

inline int connect_to(int port) {
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
inline std::string exchange(int port, const char* bytes, std::size_t size, int timeout_ms) {
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

}  // namespace fuzz_sockets
