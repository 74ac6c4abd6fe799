// Reading a small file whole, safely whatever the path names: a FIFO, a device (/dev/zero,
// /dev/urandom), a directory or a file that grows while it is read never makes the simulated
// driver block or fill its memory; each is refused with a message.
#pragma once

#include <cstddef>
#include <string>
#include <tl/expected.hpp>

namespace gpuscope::sim {

struct ReadFailure {
  int error = 0;        // the errno of a failed open or read; 0 for a refusal
  std::string message;  // "is not a regular file (a FIFO)", "is larger than 4 MiB", strerror
};

// The bytes of the regular file at path, at most max_bytes of them. Opened with O_NONBLOCK so that
// a FIFO cannot block the open, then checked with fstat before anything is read.
tl::expected<std::string, ReadFailure> read_small_file(const std::string& path,
                                                       std::size_t max_bytes);

// "4 MiB", "64 KiB", "100 bytes".
std::string size_text(std::size_t bytes);

}  // namespace gpuscope::sim
