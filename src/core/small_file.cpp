#include "core/small_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace gpuscope {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

std::string size_text(std::size_t bytes) {
  constexpr std::size_t kMiB = std::size_t{1} << 20U;
  constexpr std::size_t kKiB = std::size_t{1} << 10U;
  if (bytes >= kMiB && bytes % kMiB == 0) return fmt::format("{} MiB", bytes / kMiB);
  if (bytes >= kKiB && bytes % kKiB == 0) return fmt::format("{} KiB", bytes / kKiB);
  return fmt::format("{} bytes", bytes);
}

SmallFileFailure from_errno() {
  return {errno, std::strerror(errno)};
}

}  // namespace

tl::expected<std::string, SmallFileFailure> read_small_file(const std::filesystem::path& path,
                                                            std::size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return tl::make_unexpected(from_errno());
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) return tl::make_unexpected(from_errno());
  if (!S_ISREG(info.st_mode)) {
    return tl::make_unexpected(
        SmallFileFailure{0, fmt::format("{}, not a regular file", kind_of(info.st_mode))});
  }
  const SmallFileFailure too_large{0, "larger than " + size_text(max_bytes)};
  if (static_cast<std::size_t>(info.st_size) > max_bytes) return tl::make_unexpected(too_large);
  // Up to one byte past the cap: a file that grew since fstat is refused, not cut short.
  std::string text;
  std::array<char, 65536> buffer{};
  while (true) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return tl::make_unexpected(from_errno());
    if (n == 0) break;
    text.append(buffer.data(), static_cast<std::size_t>(n));
    if (text.size() > max_bytes) return tl::make_unexpected(too_large);
  }
  return text;
}

}  // namespace gpuscope
