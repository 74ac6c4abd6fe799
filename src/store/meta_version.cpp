#include "store/meta_version.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpuscope::store {

std::optional<std::int64_t> meta_version(Database& db, const std::string& key) {
  const auto has_meta =
      db.query_int("SELECT count(*) FROM sqlite_master WHERE type='table' AND name='meta'");
  if (!has_meta || *has_meta != 1) return std::nullopt;
  auto s = db.prepare("SELECT value FROM meta WHERE key = ?");
  s.bind(1, key);
  if (!s.step()) return std::nullopt;
  try {
    return std::stoll(s.text(0));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void create_empty_file(const std::filesystem::path& path, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    throw SqliteError(SQLITE_CANTOPEN, fmt::format("cannot create it ({})", std::strerror(errno)));
  }
  ::close(fd);
}

}  // namespace gpuscope::store
