#include "sim/small_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpuscope::sim {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::string size_text(std::size_t bytes) {
  if (bytes >= (1U << 20U) && bytes % (1U << 20U) == 0) {
    return std::to_string(bytes >> 20U) + " MiB";
  }
  if (bytes >= (1U << 10U) && bytes % (1U << 10U) == 0) {
    return std::to_string(bytes >> 10U) + " KiB";
  }
  return std::to_string(bytes) + " bytes";
}

tl::expected<std::string, ReadFailure> read_small_file(const std::string& path,
                                                       std::size_t max_bytes) {
  const Descriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) return tl::make_unexpected(ReadFailure{errno, std::strerror(errno)});
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    return tl::make_unexpected(ReadFailure{errno, std::strerror(errno)});
  }
  if (!S_ISREG(info.st_mode)) {
    return tl::make_unexpected(
        ReadFailure{0, std::string("is not a regular file (") + kind_of(info.st_mode) + ")"});
  }
  const std::string too_large = "is larger than " + size_text(max_bytes);
  if (static_cast<std::size_t>(info.st_size) > max_bytes) {
    return tl::make_unexpected(ReadFailure{0, too_large});
  }
  // Read up to one byte past the cap: a file that grew since fstat is refused, not truncated.
  std::string text;
  char buffer[65536];
  while (true) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return tl::make_unexpected(ReadFailure{errno, std::strerror(errno)});
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) return tl::make_unexpected(ReadFailure{0, too_large});
  }
  return text;
}

}  // namespace gpuscope::sim
