#include "phases/mark_socket.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <system_error>

#include "core/clock.hpp"
#include "core/error.hpp"

namespace gpuscope::phases {
namespace {

// The sender's socket, opened once per process (a fork's child opens its own).
struct SenderSocket {
  std::mutex mutex;
  int fd = -1;
  pid_t owner = 0;
};

SenderSocket& sender() {
  static SenderSocket* s = new SenderSocket;  // never destroyed: marks may be sent at exit
  return *s;
}

bool socket_address(const std::string& path, sockaddr_un& address, socklen_t& length) {
  address = {};
  address.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(address.sun_path)) return false;
  std::memcpy(address.sun_path, path.data(), path.size());
  length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() + 1);
  return true;
}

}  // namespace

SendOutcome send_mark(const std::string& address, const Mark& mark) {
  if (address.empty()) return {SendResult::NoProfiler, {}};
  sockaddr_un to{};
  socklen_t length = 0;
  if (!socket_address(address, to, length)) {
    return {SendResult::Failed, "'" + address + "' is not a socket address (empty or too long)"};
  }
  const std::string datagram = format_mark(mark);
  SenderSocket& s = sender();
  std::lock_guard lock(s.mutex);
  if (s.fd < 0 || s.owner != getpid()) {
    s.fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    s.owner = getpid();
    if (s.fd < 0) return {SendResult::Failed, std::string("socket: ") + std::strerror(errno)};
  }
  for (;;) {
    const ssize_t sent =
        ::sendto(s.fd, datagram.data(), datagram.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                 reinterpret_cast<const sockaddr*>(&to), length);
    if (sent >= 0) return {SendResult::Sent, {}};
    const int error = errno;
    if (error == EINTR) continue;
    const std::string words = address + ": " + std::strerror(error);
    if (error == EAGAIN || error == EWOULDBLOCK || error == ENOBUFS) {
      return {SendResult::Busy, words};
    }
    if (error == ECONNREFUSED || error == ENOENT || error == ENOTDIR || error == EPROTOTYPE) {
      return {SendResult::Unreachable, words};
    }
    return {SendResult::Failed, words};
  }
}

MarkReceiver::MarkReceiver(const std::filesystem::path& parent, Handler handler)
    : handler_(std::move(handler)) {
  std::string pattern = (parent / "gpuscope-marks.XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw Error(
        fmt::format("cannot create a directory for the marks' socket in {}", parent.string()),
        std::strerror(errno), "set TMPDIR to a writable directory");
  }
  dir_ = pattern;
  address_ = (dir_ / "marks").string();
  sockaddr_un address{};
  socklen_t length = 0;
  if (!socket_address(address_, address, length)) {
    std::error_code ignored;
    std::filesystem::remove(dir_, ignored);
    throw Error(fmt::format("the marks' socket path {} is too long for a socket", address_), {},
                "set TMPDIR to a shorter path");
  }
  fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0 || ::bind(fd_, reinterpret_cast<const sockaddr*>(&address), length) != 0 ||
      ::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
    const std::string why = std::strerror(errno);
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    throw Error(fmt::format("cannot listen for marks at {}", address_), why);
  }
  // A deep queue: a burst of marks waits here rather than being refused (the kernel's
  // net.unix.max_dgram_qlen still bounds the datagrams in flight).
  const int bytes = 4 << 20;
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
}

MarkReceiver::~MarkReceiver() {
  stop();
  if (fd_ >= 0) ::close(fd_);
  for (int fd : wake_) {
    if (fd >= 0) ::close(fd);
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void MarkReceiver::start() {
  if (thread_.joinable() || fd_ < 0) return;
  thread_ = std::thread([this] { loop(); });
}

void MarkReceiver::stop() {
  if (!thread_.joinable()) return;
  const char byte = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_[1], &byte, 1);
  thread_.join();
  // The socket goes now: a late sender sees Unreachable at once instead of filling a queue.
  std::error_code ignored;
  std::filesystem::remove(address_, ignored);
}

std::string MarkReceiver::last_malformed_reason() const {
  std::lock_guard lock(reason_mutex_);
  return reason_;
}

void MarkReceiver::drain() {
  std::array<char, kMaxMarkBytes + 1> buffer{};
  for (;;) {
    const ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // EAGAIN: nothing more queued
    }
    const std::int64_t arrival = mono_now_ns();
    std::string why;
    if (auto mark =
            parse_mark(std::string_view(buffer.data(), static_cast<std::size_t>(n)), &why)) {
      handler_(*mark, arrival);
    } else {
      ++malformed_;
      std::lock_guard lock(reason_mutex_);
      reason_ = why;
    }
  }
}

void MarkReceiver::loop() {
  std::array<pollfd, 2> fds{pollfd{fd_, POLLIN, 0}, pollfd{wake_[0], POLLIN, 0}};
  for (;;) {
    const int ready = ::poll(fds.data(), fds.size(), -1);
    if (ready < 0 && errno == EINTR) continue;
    drain();
    if (ready < 0 || (fds[1].revents & POLLIN) != 0) break;
  }
  drain();
}

}  // namespace gpuscope::phases
