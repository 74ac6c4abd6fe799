#include "util/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>
#include <utility>

#include "util/temporary_folder.hpp"

namespace gpuscope::util {
namespace fs = std::filesystem;

namespace {

std::error_code last_error() {
  return {errno, std::generic_category()};
}

// Flushes the file at `path` (opened read-only with `extra_flags`) to its disk.
std::error_code sync_file(const fs::path& path, int extra_flags) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | extra_flags);
  if (fd < 0) return last_error();
  const std::error_code error = ::fsync(fd) != 0 ? last_error() : std::error_code{};
  ::close(fd);
  return error;
}

// The staging folder's name: the target's (cut to leave room within NAME_MAX) and ours.
std::string staging_prefix(const fs::path& target) {
  constexpr std::size_t kNameBytes = 200;
  return "." + target.filename().string().substr(0, kNameBytes) + ".gpuscope-tmp-";
}

}  // namespace

PathKind path_kind(const fs::path& path, std::error_code& error) {
  error.clear();
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    if (errno != ENOENT) {
      error = last_error();
      return PathKind::Other;
    }
    struct stat link {};
    if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) return PathKind::BrokenLink;
    return PathKind::Absent;
  }
  if (S_ISREG(info.st_mode)) return PathKind::Regular;
  if (S_ISDIR(info.st_mode)) return PathKind::Directory;
  if (S_ISCHR(info.st_mode)) return PathKind::CharacterDevice;
  if (S_ISBLK(info.st_mode)) return PathKind::BlockDevice;
  if (S_ISFIFO(info.st_mode)) return PathKind::Fifo;
  if (S_ISSOCK(info.st_mode)) return PathKind::Socket;
  return PathKind::Other;
}

const char* kind_name(PathKind kind) {
  switch (kind) {
    case PathKind::Absent:
      return "nothing";
    case PathKind::Regular:
      return "regular file";
    case PathKind::Directory:
      return "directory";
    case PathKind::CharacterDevice:
      return "character device";
    case PathKind::BlockDevice:
      return "block device";
    case PathKind::Fifo:
      return "FIFO";
    case PathKind::Socket:
      return "socket";
    case PathKind::BrokenLink:
      return "symbolic link to nothing";
    case PathKind::Other:
      break;
  }
  return "special file";
}

bool is_stdout_name(const fs::path& name) {
  return name == "-" || name == "/dev/stdout";
}

std::optional<std::pair<std::uint64_t, std::uint64_t>> file_identity(const fs::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::nullopt;
  return std::pair<std::uint64_t, std::uint64_t>{info.st_dev, info.st_ino};
}

bool same_file(const fs::path& a, const fs::path& b) {
  const auto first = file_identity(a);
  const auto second = file_identity(b);
  return first && second && *first == *second;
}

std::error_code write_all(int fd, const void* data, std::size_t size) {
  const auto* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t written = ::write(fd, bytes, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      return last_error();
    }
    bytes += written;
    size -= static_cast<std::size_t>(written);
  }
  return {};
}

StagedFile::StagedFile(fs::path target) : target_(std::move(target)) {}

StagedFile::~StagedFile() = default;  // the folder goes with everything in it

std::error_code StagedFile::create() {
  if (folder_) return std::make_error_code(std::errc::file_exists);
  fs::path where = target_.parent_path();
  if (where.empty()) where = ".";
  try {
    folder_ = std::make_unique<TemporaryFolder>(staging_prefix(target_), where);
  } catch (const std::system_error& e) {  // filesystem_error too
    return e.code();
  }
  path_ = folder_->path() / target_.filename();
  return {};
}

std::error_code StagedFile::commit() {
  if (!folder_) return std::make_error_code(std::errc::no_such_file_or_directory);
  if (auto error = sync_file(path_, O_NOFOLLOW)) return error;
  return move_into_place();
}

std::error_code StagedFile::move_into_place() {
  if (!folder_) return std::make_error_code(std::errc::no_such_file_or_directory);
  if (::rename(path_.c_str(), target_.c_str()) != 0) return last_error();
  sync_folder_of(target_);
  folder_.reset();
  return {};
}

AtomicFile::AtomicFile(fs::path target) : target_(std::move(target)), staged_(target_) {}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);  // the staging folder goes with staged_
}

std::error_code AtomicFile::open() {
  if (auto error = staged_.create()) return error;
  fd_ = ::open(staged_.path().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  return fd_ < 0 ? last_error() : std::error_code{};
}

std::error_code AtomicFile::write(std::string_view bytes) {
  if (fd_ < 0) return std::make_error_code(std::errc::bad_file_descriptor);
  return write_all(fd_, bytes.data(), bytes.size());
}

std::error_code AtomicFile::commit() {
  if (fd_ < 0) return std::make_error_code(std::errc::bad_file_descriptor);
  if (::fsync(fd_) != 0) return last_error();
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) return last_error();
  return staged_.move_into_place();
}

void sync_folder_of(const fs::path& target) {
  // The rename is durable once the folder is; a folder that cannot be synced (some network
  // file systems) still has the complete file under its name.
  fs::path folder = target.parent_path();
  if (folder.empty()) folder = ".";
  const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

std::error_code commit_written_file(const fs::path& temporary, const fs::path& target) {
  if (auto error = sync_file(temporary, 0)) return error;
  if (::rename(temporary.c_str(), target.c_str()) != 0) return last_error();
  sync_folder_of(target);
  return {};
}

std::error_code write_file_atomically(const fs::path& target, std::string_view bytes) {
  AtomicFile file(target);
  if (auto error = file.open()) return error;
  if (auto error = file.write(bytes)) return error;
  return file.commit();
}

}  // namespace gpuscope::util
