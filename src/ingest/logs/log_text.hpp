// Reading a text log line by line, streamed (a 10 GB log in a fixed buffer): line endings \n or
// \r\n, the line number for messages, and whether the last line was cut off mid-write (no line
// end: a logger killed with its job). Shared by the log formats (docs/logs.md).
#pragma once

#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::ingest {

// The first `bytes` bytes of `path` (fewer when it is shorter); empty when it is not a regular
// file or cannot be read. Never throws.
std::string read_head(const std::filesystem::path& path, std::size_t bytes);

// Whether `path` is a regular file that may be a text log: readable, not an SQLite database, no
// NUL byte in its first 4 KiB.
bool is_foreign_text(const std::filesystem::path& path);

class LogLines {
 public:
  // Lines longer than this are no log's: an error naming the line.
  static constexpr std::size_t kMaxLine = std::size_t{1} << 20;

  // Opens `path`; throws Error naming it when it cannot be read.
  explicit LogLines(const std::filesystem::path& path);
  ~LogLines();
  LogLines(const LogLines&) = delete;
  LogLines& operator=(const LogLines&) = delete;

  // The next line, without its line end; false at the end of the file. The view lives until
  // the next call. Throws Error naming the file and line for a read error or an overlong line.
  bool next(std::string_view& line);
  // The number of the line `next` returned last (1-based).
  std::size_t number() const { return number_; }
  // Whether the line `next` returned last ended the file without a line end.
  bool unterminated() const { return unterminated_; }
  // "log.csv:12": the file and the line `next` returned last, for messages.
  std::string where() const;
  const std::filesystem::path& path() const { return path_; }
  // Bytes read so far.
  std::size_t offset() const { return consumed_; }

 private:
  bool fill();

  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  std::vector<char> buffer_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  bool eof_ = false;
  std::size_t number_ = 0;
  std::size_t consumed_ = 0;
  bool unterminated_ = false;
  std::string carry_;  // a line that spans a refill
};

// The next line of `lines` worth reading, trimmed (blank lines skipped); false at the end, and at
// a last line without its line end: nvidia-smi and dcgmi end every line they print, so that one
// was cut off mid-write (the logger killed with its job) and is left out, said in `notes`.
bool next_log_line(LogLines& lines, std::string_view& text, std::vector<std::string>& notes);

// The first line of `text` that is not blank, trimmed; empty when there is none.
std::string_view first_line(std::string_view text);

// `line` split at `separator`, each field without the blanks around it (views into `line`).
void split_fields(std::string_view line, char separator, std::vector<std::string_view>& out);
// `line` split at runs of blanks (spaces, tabs).
void split_blanks(std::string_view line, std::vector<std::string_view>& out);
// `text` without blanks at either end.
std::string_view trim(std::string_view text);

}  // namespace gpuscope::ingest
