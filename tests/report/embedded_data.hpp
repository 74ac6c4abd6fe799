// What the HTML report tests share: an embedded <script> element's text, base64 and gzip undone.
#pragma once

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <string>

namespace gpuscope::report::testing {

// The text of the gzip+base64 <script> element with this id, as written.
inline std::string embedded_element(const std::string& html, const std::string& id) {
  const std::string open =
      "<script type=\"application/gzip\" id=\"" + id + "\" data-encoding=\"gzip+base64\">";
  const auto begin = html.find(open);
  EXPECT_NE(begin, std::string::npos) << "no element " << id;
  if (begin == std::string::npos) return {};
  const auto end = html.find("</script>", begin);
  return html.substr(begin + open.size(), end - begin - open.size());
}

inline std::string from_base64(const std::string& text) {
  static const std::string alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::uint32_t buffer = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=') break;
    const auto value = alphabet.find(c);
    EXPECT_NE(value, std::string::npos) << "not base64: " << c;
    buffer = (buffer << 6) | static_cast<std::uint32_t>(value);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xFFU);
    }
  }
  return out;
}

inline std::string gunzip(const std::string& bytes) {
  z_stream stream{};
  EXPECT_EQ(inflateInit2(&stream, 15 + 16), Z_OK);  // gzip wrapper only
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  std::string out;
  char chunk[1 << 16];
  int result = Z_OK;
  while (result == Z_OK) {
    stream.next_out = reinterpret_cast<Bytef*>(chunk);
    stream.avail_out = sizeof chunk;
    result = inflate(&stream, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - stream.avail_out);
  }
  inflateEnd(&stream);
  EXPECT_EQ(result, Z_STREAM_END) << "the data is not one complete gzip stream";
  return out;
}

// The embedded element with this id, decoded.
inline std::string embedded_text(const std::string& html, const std::string& id) {
  return gunzip(from_base64(embedded_element(html, id)));
}

}  // namespace gpuscope::report::testing
