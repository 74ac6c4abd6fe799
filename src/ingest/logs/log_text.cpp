#include "ingest/logs/log_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include "core/error.hpp"

namespace gpuscope::ingest {

namespace fs = std::filesystem;

std::string read_head(const fs::path& path, std::size_t bytes) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return {};
  std::ifstream in(path, std::ios::binary);
  std::string head(bytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(bytes));
  head.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  return head;
}

bool is_foreign_text(const fs::path& path) {
  const std::string head = read_head(path, 4096);
  if (head.empty()) return false;
  if (head.rfind(std::string_view("SQLite format 3\0", 16), 0) == 0) return false;
  return head.find('\0') == std::string::npos;
}

LogLines::LogLines(const fs::path& path) : path_(path), buffer_(std::size_t{1} << 20) {
  std::error_code error;
  if (fs::is_directory(path, error)) {
    throw Error::usage(fmt::format("{} is a folder, not a log file", path.string()), {},
                       "give the log files themselves");
  }
  file_ = std::fopen(path.c_str(), "rb");
  if (file_ == nullptr) {
    throw Error(fmt::format("cannot read {}", path.string()), std::strerror(errno),
                "check the path and its permissions");
  }
}

LogLines::~LogLines() {
  if (file_ != nullptr) std::fclose(file_);
}

std::string LogLines::where() const {
  return fmt::format("{}:{}", path_.string(), number_);
}

bool LogLines::fill() {
  if (eof_) return false;
  const std::size_t got = std::fread(buffer_.data(), 1, buffer_.size(), file_);
  if (got < buffer_.size()) {
    if (std::ferror(file_) != 0) {
      throw Error(fmt::format("cannot read {} after line {}", path_.string(), number_),
                  std::strerror(errno), "check the file and the disk it is on");
    }
    eof_ = true;
  }
  begin_ = 0;
  end_ = got;
  return got > 0;
}

bool LogLines::next(std::string_view& line) {
  carry_.clear();
  for (;;) {
    if (begin_ == end_ && !fill()) {
      if (carry_.empty()) return false;
      ++number_;
      consumed_ += carry_.size();
      unterminated_ = true;
      if (!carry_.empty() && carry_.back() == '\r') carry_.pop_back();
      line = carry_;
      return true;
    }
    const char* start = buffer_.data() + begin_;
    const auto* newline = static_cast<const char*>(std::memchr(start, '\n', end_ - begin_));
    if (newline == nullptr) {
      carry_.append(start, end_ - begin_);
      begin_ = end_;
      if (carry_.size() > kMaxLine) {
        throw Error::usage(fmt::format("{}:{}: a line longer than {} MiB", path_.string(),
                                       number_ + 1, kMaxLine >> 20),
                           {}, "this is not a log gpuscope reads");
      }
      continue;
    }
    const auto length = static_cast<std::size_t>(newline - start);
    ++number_;
    consumed_ += length + 1;
    unterminated_ = false;
    begin_ += length + 1;
    if (carry_.empty()) {
      line = std::string_view(start, length);
    } else {
      carry_.append(start, length);
      line = carry_;
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return true;
  }
}

bool next_log_line(LogLines& lines, std::string_view& text, std::vector<std::string>& notes) {
  std::string_view line;
  while (lines.next(line)) {
    text = trim(line);
    if (text.empty()) continue;
    if (lines.unterminated()) {
      notes.push_back(
          fmt::format("{}: the last line was cut off mid-write; left out", lines.where()));
      return false;
    }
    return true;
  }
  return false;
}

std::string_view first_line(std::string_view text) {
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    const std::string_view line = trim(text.substr(0, end));
    if (!line.empty()) return line;
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return {};
}

std::string_view trim(std::string_view text) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  return text;
}

void split_fields(std::string_view line, char separator, std::vector<std::string_view>& out) {
  out.clear();
  for (;;) {
    const std::size_t at = line.find(separator);
    out.push_back(trim(line.substr(0, at)));
    if (at == std::string_view::npos) return;
    line.remove_prefix(at + 1);
  }
}

void split_blanks(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
}

}  // namespace gpuscope::ingest
