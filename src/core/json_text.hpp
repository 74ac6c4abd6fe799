// How gpuscope writes JSON, everywhere: strings are bytes from the outside world (job arguments,
// labels, file names, kernel names, driver strings) and may not be UTF-8, so invalid bytes
// become U+FFFD instead of an exception that would lose the whole output; numbers that are not
// finite (an inf read from a database) become null, as nlohmann's dump and json_number do.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

namespace gpuscope {

// value as JSON text (indent < 0: one line), never throwing for invalid UTF-8.
inline std::string json_text(const nlohmann::json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace detail {

// nlohmann's serializer writes a token at a time; through std::cout each would be a call into
// stdio. This gathers them into 64 KB pieces.
class BufferedJsonOutput : public nlohmann::detail::output_adapter_protocol<char> {
 public:
  explicit BufferedJsonOutput(std::ostream& out) : out_(out) { buffer_.reserve(kSize); }
  BufferedJsonOutput(const BufferedJsonOutput&) = delete;
  BufferedJsonOutput& operator=(const BufferedJsonOutput&) = delete;
  ~BufferedJsonOutput() override { flush(); }
  void write_character(char c) override {
    buffer_.push_back(c);
    if (buffer_.size() >= kSize) flush();
  }
  void write_characters(const char* s, std::size_t length) override {
    buffer_.append(s, length);
    if (buffer_.size() >= kSize) flush();
  }
  void flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    buffer_.clear();
  }

 private:
  static constexpr std::size_t kSize = 64 * 1024;
  std::ostream& out_;
  std::string buffer_;
};

}  // namespace detail

// value as JSON text written to `out` as it is serialised, with no copy of the whole text in
// memory (a 10,000-GPU analysis is tens of MB of it); the same text as json_text.
inline void write_json(std::ostream& out, const nlohmann::json& value, int indent = -1) {
  const auto buffered = std::make_shared<detail::BufferedJsonOutput>(out);
  nlohmann::detail::serializer<nlohmann::json> serializer(buffered, ' ',
                                                          nlohmann::json::error_handler_t::replace);
  serializer.dump(value, indent >= 0, false, static_cast<unsigned>(std::max(indent, 0)));
  buffered->flush();
}

// A number for hand-written JSON: the shortest text that reads back as v, or null.
inline std::string json_number(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : std::string("null");
}

}  // namespace gpuscope
