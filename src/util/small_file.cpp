#include "util/small_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace gpuscope::util {
namespace {

SmallFileFailure from_errno() {
  const int error = errno;
  return {error, {}, 0, std::strerror(error)};
}

SmallFileFailure too_large(std::size_t limit) {
  return {0, {}, limit, "larger than " + size_text(limit)};
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
  constexpr std::size_t kMiB = std::size_t{1} << 20U;
  constexpr std::size_t kKiB = std::size_t{1} << 10U;
  if (bytes >= kMiB && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  if (bytes >= kKiB && bytes % kKiB == 0) return std::to_string(bytes / kKiB) + " KiB";
  return std::to_string(bytes) + " bytes";
}

tl::expected<std::string, SmallFileFailure> read_small_file(const std::string& path,
                                                            std::size_t max_bytes) {
  const Descriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) return tl::make_unexpected(from_errno());
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return tl::make_unexpected(from_errno());
  if (!S_ISREG(info.st_mode)) {
    const std::string kind = file_kind_text(info.st_mode);
    return tl::make_unexpected(SmallFileFailure{0, kind, 0, kind + ", not a regular file"});
  }
  if (static_cast<std::size_t>(info.st_size) > max_bytes) {
    return tl::make_unexpected(too_large(max_bytes));
  }
  std::string text;
  std::array<char, 65536> buffer{};
  while (true) {
    const ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return tl::make_unexpected(from_errno());
    }
    text.append(buffer.data(), static_cast<std::size_t>(n));
    if (text.size() > max_bytes) return tl::make_unexpected(too_large(max_bytes));
  }
  return text;
}

const char* file_kind_text(unsigned mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

}  // namespace gpuscope::util
