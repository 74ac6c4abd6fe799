#include "util/text_table.hpp"

#include <algorithm>

namespace gpuscope::util {

std::size_t display_width(std::string_view text) {
  std::size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0U) != 0x80U ? 1 : 0;
  return n;
}

TableText render_table(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows,
                       const TableLayout& layout) {
  std::vector<std::size_t> width(header.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], display_width(row[i]));
    }
  };
  measure(header);
  for (const auto& row : rows) measure(row);
  const auto align = [&](std::size_t column) {
    return column < layout.align.size() ? layout.align[column] : Align::Right;
  };
  auto line = [&](const std::vector<std::string>& row) {
    std::string out;
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (i > 0) out += "  ";
      const std::size_t w = i < width.size() ? width[i] : 0;
      const std::string pad(w - std::min(w, display_width(row[i])), ' ');
      if (align(i) == Align::Right) {
        out += pad + row[i];
      } else {
        out += i + 1 < row.size() ? row[i] + pad : row[i];
      }
    }
    return out + "\n";
  };
  TableText text{line(header), {}};
  if (layout.rule) {
    std::vector<std::string> dashes;
    for (std::size_t w : width) dashes.emplace_back(w, '-');
    text.body += line(dashes);
  }
  for (const auto& row : rows) text.body += line(row);
  return text;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

}  // namespace gpuscope::util
