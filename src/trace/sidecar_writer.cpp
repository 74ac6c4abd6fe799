#include "trace/sidecar_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpuscope::trace {

void SidecarBatch::add(RecordType type, const void* payload, std::size_t size,
                       std::string_view tail) {
  const std::size_t total = size + tail.size();
  const RecordHeader header{static_cast<std::uint32_t>(type), static_cast<std::uint32_t>(total)};
  const std::size_t at = bytes_.size();
  bytes_.resize(at + sizeof(header) + padded_size(total), 0);
  std::memcpy(bytes_.data() + at, &header, sizeof(header));
  if (size > 0) std::memcpy(bytes_.data() + at + sizeof(header), payload, size);
  if (!tail.empty()) {
    std::memcpy(bytes_.data() + at + sizeof(header) + size, tail.data(), tail.size());
  }
}

SidecarFile::~SidecarFile() {
  close();
}

bool SidecarFile::open(const std::string& dir, const std::string& host, long pid) {
  close();
  for (int n = 0; n < 1000; ++n) {
    path_ =
        dir + "/" + host + "." + std::to_string(pid) + "." + std::to_string(n) + kSidecarExtension;
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ >= 0) break;
    if (errno != EEXIST) {
      error_ = "cannot create " + path_ + ": " + std::strerror(errno);
      return false;
    }
  }
  if (fd_ < 0) {
    error_ = "cannot create a sidecar file in " + dir + ": too many files for pid " +
             std::to_string(pid);
    return false;
  }
  FileHeader header{};
  std::memcpy(header.magic, kSidecarMagic, sizeof(header.magic));
  header.version = kSidecarVersion;
  return write_all(&header, sizeof(header));
}

bool SidecarFile::append(const SidecarBatch& batch) {
  if (fd_ < 0) return false;
  if (batch.empty()) return true;
  return write_all(batch.bytes().data(), batch.bytes().size());
}

bool SidecarFile::write_all(const void* data, std::size_t size) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd_, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = "cannot write " + path_ + ": " + std::strerror(n < 0 ? errno : EIO);
      ::close(fd_);
      fd_ = -1;
      return false;
    }
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

void SidecarFile::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace gpuscope::trace
