// The fuzz targets' input as a file: the readers under test take paths, as the commands do.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace gpuscope::fuzz {

// A property the target checks: libFuzzer reports the input that breaks it as a crash.
inline void require(bool ok) {
  if (!ok) std::abort();
}

// Writes the input to a fresh file in $TMPDIR (or /tmp), removed when this goes.
class InputFile {
 public:
  InputFile(const std::uint8_t* data, std::size_t size, const char* suffix) {
    const char* tmp = std::getenv("TMPDIR");
    path_ = std::string(tmp != nullptr ? tmp : "/tmp") + "/gpuscope-fuzz-" +
            std::to_string(getpid()) + suffix;
    std::FILE* out = std::fopen(path_.c_str(), "wb");
    if (out == nullptr) std::abort();
    if (size > 0 && std::fwrite(data, 1, size, out) != size) std::abort();
    std::fclose(out);
  }
  ~InputFile() {
    std::remove(path_.c_str());
    // SQLite may leave a journal or WAL beside a database it opened.
    std::remove((path_ + "-journal").c_str());
    std::remove((path_ + "-wal").c_str());
    std::remove((path_ + "-shm").c_str());
  }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace gpuscope::fuzz
