// A stand-in for a proxy that echoes the request's Authorization header into its error body
// (some do, in their "bad gateway" or debugging pages): a loopback socket that answers every
// connection with `status` and a body of `before`, the request's Authorization line, and the
// whole request after it. Header-only, for the suites of both clients that send credentials.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

namespace gpuscope::testing {

class EchoProxy {
 public:
  explicit EchoProxy(std::string before = "upstream refused: ", int status = 502)
      : before_(std::move(before)), status_(status) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    socklen_t length = sizeof(address);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    listen(fd_, 8);
    thread_ = std::thread([this] {
      for (int client; (client = accept(fd_, nullptr, nullptr)) >= 0;) answer(client);
    });
  }
  ~EchoProxy() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  EchoProxy(const EchoProxy&) = delete;
  EchoProxy& operator=(const EchoProxy&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  void answer(int client) {
    std::string request;
    char buffer[4096];
    while (request.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = read(client, buffer, sizeof(buffer));
      if (n <= 0) break;
      request.append(buffer, static_cast<std::size_t>(n));
    }
    std::string authorization;
    if (const auto at = request.find("Authorization:"); at != std::string::npos) {
      authorization = request.substr(at, request.find("\r\n", at) - at);
    }
    const std::string body = before_ + authorization + "\n" + request;
    const std::string reply = "HTTP/1.1 " + std::to_string(status_) +
                              " Echo\r\nContent-Type: text/plain\r\nConnection: close\r\n"
                              "Content-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n" + body;
    (void)!write(client, reply.data(), reply.size());
    close(client);
  }

  std::string before_;
  int status_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace gpuscope::testing
