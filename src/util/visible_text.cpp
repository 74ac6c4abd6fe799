#include "util/visible_text.hpp"

#include <cstdint>
#include <cstdio>

namespace gpuscope::util {
namespace {

void append_hex(std::string& out, unsigned char byte) {
  char buffer[8];
  std::snprintf(buffer, sizeof(buffer), "\\x%02x", byte);
  out += buffer;
}

// The length of the valid UTF-8 sequence at `text[i]` and its code point; 0 when not valid
// (overlong forms and surrogates included).
std::size_t utf8_at(std::string_view text, std::size_t i, std::uint32_t& code) {
  const auto lead = static_cast<unsigned char>(text[i]);
  std::size_t length = 0;
  std::uint32_t min = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, code = lead & 0x1FU, min = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, code = lead & 0x0FU, min = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, code = lead & 0x07U, min = 0x10000;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    const auto next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xC0U) != 0x80U) return 0;
    code = code << 6 | (next & 0x3FU);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

bool hidden_code_point(std::uint32_t code) {
  return (code >= 0x80 && code <= 0x9F) || (code >= 0x202A && code <= 0x202E) ||
         (code >= 0x2066 && code <= 0x2069) || code == 0x2028 || code == 0x2029;
}

}  // namespace

std::string visible(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      if (byte == '\n') {
        out += "\\n";
      } else if (byte == '\r') {
        out += "\\r";
      } else if (byte == '\t') {
        out += "\\t";
      } else if (byte < 0x20 || byte == 0x7F) {
        append_hex(out, byte);
      } else {
        out += static_cast<char>(byte);
      }
      ++i;
      continue;
    }
    std::uint32_t code = 0;
    const std::size_t length = utf8_at(text, i, code);
    if (length == 0) {
      append_hex(out, byte);
      ++i;
    } else if (hidden_code_point(code)) {
      char buffer[16];
      std::snprintf(buffer, sizeof(buffer), "\\u{%04X}", static_cast<unsigned>(code));
      out += buffer;
      i += length;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

}  // namespace gpuscope::util
