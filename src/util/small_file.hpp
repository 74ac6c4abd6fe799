// Reading a small input file whole, safely whatever the path names: a FIFO, a device
// (/dev/zero, /dev/urandom), a directory or a file that grows while it is read is refused with a
// reason instead of blocking the reader or filling its memory. Used by gpuscope and by the
// simulated driver alike.
#pragma once

#include <cstddef>
#include <string>
#include <tl/expected.hpp>

namespace gpuscope::util {

struct SmallFileFailure {
  int error = 0;          // errno of a failed open or read (ENOENT: missing); 0 for a refusal
  std::string file_kind;  // a refusal of what is not a regular file: "a FIFO", "a directory", ...
  std::size_t limit = 0;  // a refusal of a file larger than this many bytes
  // In words: strerror(error), "a FIFO, not a regular file" or "larger than 1 MiB".
  std::string reason;
};

// The bytes of the regular file at path, at most max_bytes of them. Opened with O_NONBLOCK, so a
// FIFO cannot block the open, and checked with fstat before a byte is read; a file that grows
// past max_bytes while it is read is refused, not cut short.
tl::expected<std::string, SmallFileFailure> read_small_file(const std::string& path,
                                                            std::size_t max_bytes);

// What a file of st_mode `mode` is, for a refusal of what is not a regular file: "a FIFO",
// "a directory", "a character device", ...
const char* file_kind_text(unsigned mode);

// "4 MiB", "64 KiB", "100 bytes".
std::string size_text(std::size_t bytes);

}  // namespace gpuscope::util
