// Reading a small input file whole, safely whatever the path names: a FIFO, a device
// (/dev/zero, /dev/urandom), a directory or a file that grows while it is read is refused with a
// message instead of blocking gpuscope or filling its memory.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <tl/expected.hpp>

namespace gpuscope {

struct SmallFileFailure {
  int error = 0;       // errno of a failed open or read (ENOENT: missing); 0 for a refusal
  std::string reason;  // "a FIFO, not a regular file", "larger than 1 MiB", strerror(error)
};

// The bytes of the regular file at path, at most max_bytes of them. Opened with O_NONBLOCK, so a
// FIFO cannot block the open, and checked with fstat before a byte is read.
tl::expected<std::string, SmallFileFailure> read_small_file(const std::filesystem::path& path,
                                                            std::size_t max_bytes);

}  // namespace gpuscope
