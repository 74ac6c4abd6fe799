#include "tsdb/promql.hpp"

#include <fmt/format.h>

namespace gpuscope::tsdb {

std::string quote(std::string_view value) {
  std::string out = "\"";
  for (const char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string selector(std::string_view name,
                     const std::vector<std::pair<std::string, std::string>>& matches) {
  std::string out(name);
  out += '{';
  for (std::size_t i = 0; i < matches.size(); ++i) {
    if (i > 0) out += ',';
    out += matches[i].first + "=" + quote(matches[i].second);
  }
  return out + '}';
}

std::string duration(std::int64_t ms) {
  return fmt::format("{}s", std::max<std::int64_t>(1, (ms + 999) / 1000));
}

std::string regex_quote(std::string_view text) {
  static constexpr std::string_view kMeta = R"(\.+*?()|[]{}^$)";
  std::string out;
  for (char c : text) {
    if (kMeta.find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string selector(const std::vector<Matcher>& matchers) {
  std::string out = "{";
  for (const auto& m : matchers) {
    if (out.size() > 1) out += ',';
    out += m.label + m.op + quote(m.value);
  }
  return out + "}";
}

}  // namespace gpuscope::tsdb
