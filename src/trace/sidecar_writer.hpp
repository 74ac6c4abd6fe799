// Writing a trace sidecar file (trace/sidecar_format.hpp): records are encoded into memory and
// appended with one write(2) per batch. No exceptions, no allocation beyond the batch, no
// dependency outside the C++ standard library and POSIX: this code runs inside the traced job,
// in the CUPTI injection library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trace/sidecar_format.hpp"

namespace gpuscope::trace {

// Records encoded in memory, ready to be appended.
class SidecarBatch {
 public:
  // Appends one record: `payload` then `tail` (e.g. a name after its fixed part), padded.
  void add(RecordType type, const void* payload, std::size_t size, std::string_view tail = {});
  template <typename Record>
  void add(RecordType type, const Record& record, std::string_view tail = {}) {
    add(type, &record, sizeof(Record), tail);
  }
  void note(std::string_view text) { add(RecordType::Note, nullptr, 0, text); }

  const std::vector<std::uint8_t>& bytes() const { return bytes_; }
  bool empty() const { return bytes_.empty(); }
  void clear() { bytes_.clear(); }

 private:
  std::vector<std::uint8_t> bytes_;
};

// One process's sidecar file, opened for appending.
class SidecarFile {
 public:
  SidecarFile() = default;
  ~SidecarFile();
  SidecarFile(const SidecarFile&) = delete;
  SidecarFile& operator=(const SidecarFile&) = delete;

  // Creates a new file <dir>/<host>.<pid>.<n>.gstrace (the first n that does not exist) and
  // writes the file header. False when it cannot; error() says why.
  bool open(const std::string& dir, const std::string& host, long pid);
  // Appends the batch whole (retrying short writes). After a failure the file is given up on:
  // a reader keeps every record before the cut.
  bool append(const SidecarBatch& batch);
  void close();

  bool is_open() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }

 private:
  bool write_all(const void* data, std::size_t size);

  int fd_ = -1;
  std::string path_;
  std::string error_;
};

}  // namespace gpuscope::trace
