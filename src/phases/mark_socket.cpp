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
  std::string address;
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
  const std::string line = format_mark(mark) + "\n";
  SenderSocket& s = sender();
  std::lock_guard lock(s.mutex);
  const auto fail = [&s, &address](SendResult result, int error) {
    if (s.fd >= 0) ::close(s.fd);
    s.fd = -1;
    return SendOutcome{result, address + ": " + std::strerror(error)};
  };
  // One connection per process, made at its first mark (a fork's child shares its parent's until
  // then: each line is written whole, so their lines never mix).
  if (s.fd < 0 || s.address != address) {
    if (s.fd >= 0) ::close(s.fd);
    s.fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    s.address = address;
    if (s.fd < 0) return fail(SendResult::Failed, errno);
    if (::connect(s.fd, reinterpret_cast<const sockaddr*>(&to), length) != 0) {
      const int error = errno;
      // EAGAIN: the profiler's backlog of connections is full.
      if (error == EAGAIN || error == EWOULDBLOCK) return fail(SendResult::Busy, error);
      if (error == ECONNREFUSED || error == ENOENT || error == ENOTDIR) {
        return fail(SendResult::Unreachable, error);
      }
      return fail(SendResult::Failed, error);
    }
  }
  for (;;) {
    // A line shorter than half the socket's buffer goes whole or not at all (one skb).
    const ssize_t sent = ::send(s.fd, line.data(), line.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (sent == static_cast<ssize_t>(line.size())) return {SendResult::Sent, {}};
    const int error = sent < 0 ? errno : EIO;
    if (error == EINTR) continue;
    if (error == EAGAIN || error == EWOULDBLOCK) {
      return {SendResult::Busy, address + ": " + std::strerror(error)};  // the connection stays
    }
    if (error == EPIPE || error == ECONNRESET || error == ENOTCONN) {
      return fail(SendResult::Unreachable, error);
    }
    return fail(SendResult::Failed, error);
  }
}

MarkReceiver::MarkReceiver(const std::filesystem::path& parent, Handler handler)
    : handler_(std::move(handler)) {
  try {
    dir_.emplace("gpuscope-marks.", parent);
  } catch (const std::system_error& error) {
    throw Error(
        fmt::format("cannot create a directory for the marks' socket in {}", parent.string()),
        error.code().message(), "set TMPDIR to a writable directory");
  }
  address_ = (dir_->path() / "marks").string();
  sockaddr_un address{};
  socklen_t length = 0;
  if (!socket_address(address_, address, length)) {
    throw Error(fmt::format("the marks' socket path {} is too long for a socket", address_), {},
                "set TMPDIR to a shorter path");
  }
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0 || ::bind(fd_, reinterpret_cast<const sockaddr*>(&address), length) != 0 ||
      ::listen(fd_, 512) != 0 || ::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
    const std::string why = std::strerror(errno);
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    throw Error(fmt::format("cannot listen for marks at {}", address_), why);
  }
}

MarkReceiver::~MarkReceiver() {
  stop();
  for (auto& c : clients_) ::close(c.fd);
  if (fd_ >= 0) ::close(fd_);
  for (int fd : wake_) {
    if (fd >= 0) ::close(fd);
  }
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
  // The socket and the connections go now: a late sender is refused at once.
  std::error_code ignored;
  std::filesystem::remove(address_, ignored);
  ::close(fd_);
  fd_ = -1;
  for (auto& c : clients_) ::close(c.fd);
  clients_.clear();
}

std::string MarkReceiver::last_malformed_reason() const {
  std::lock_guard lock(reason_mutex_);
  return reason_;
}

void MarkReceiver::accept_all() {
  for (;;) {
    const int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (client < 0) {
      if (errno == EINTR) continue;
      return;  // EAGAIN: none waiting; EMFILE: the senders see their marks refused
    }
    clients_.push_back({client, {}});
  }
}

void MarkReceiver::line(std::string_view text) {
  const std::int64_t arrival = mono_now_ns();
  std::string why;
  if (auto mark = parse_mark(text, &why)) {
    handler_(*mark, arrival);
  } else {
    ++malformed_;
    std::lock_guard lock(reason_mutex_);
    reason_ = why;
  }
}

bool MarkReceiver::read_client(Client& c) {
  std::array<char, 16384> buffer{};
  for (;;) {
    const ssize_t n = ::recv(c.fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK;  // open, nothing more for now
    if (n == 0) {
      // The sender closed: a last line without its newline is still a line.
      if (!c.pending.empty() && !c.overlong) line(c.pending);
      return false;
    }
    std::string_view data(buffer.data(), static_cast<std::size_t>(n));
    while (!data.empty()) {
      const auto newline = data.find('\n');
      const std::string_view part = data.substr(0, newline);
      if (!c.overlong) c.pending.append(part);
      if (c.pending.size() > kMaxMarkBytes) {
        // No newline within a mark's length: not the protocol; skip to the next newline.
        if (!c.overlong) {
          ++malformed_;
          std::lock_guard lock(reason_mutex_);
          reason_ = "a line longer than 4096 bytes";
        }
        c.overlong = true;
        c.pending.clear();
      }
      if (newline == std::string_view::npos) break;
      if (!c.overlong) line(c.pending);
      c.pending.clear();
      c.overlong = false;
      data.remove_prefix(newline + 1);
    }
  }
}

void MarkReceiver::drain() {
  accept_all();
  for (std::size_t i = 0; i < clients_.size();) {
    if (read_client(clients_[i])) {
      ++i;
    } else {
      ::close(clients_[i].fd);
      clients_.erase(clients_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
}

void MarkReceiver::loop() {
  std::vector<pollfd> fds;
  for (;;) {
    fds.clear();
    fds.push_back({fd_, POLLIN, 0});
    fds.push_back({wake_[0], POLLIN, 0});
    for (const auto& c : clients_) fds.push_back({c.fd, POLLIN, 0});
    const int ready = ::poll(fds.data(), fds.size(), -1);
    if (ready < 0 && errno == EINTR) continue;
    const bool stopping = ready < 0 || (fds[1].revents & POLLIN) != 0;
    drain();
    if (stopping) break;
  }
  // What was sent before stop() is in the connections' buffers: read it all.
  drain();
}

}  // namespace gpuscope::phases
