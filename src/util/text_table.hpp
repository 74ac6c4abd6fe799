// Plain-text tables for terminals: columns sized to their widest cell (in code points, so "µ"
// and "°" do not skew them), separated by two spaces.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::util {

enum class Align { Left, Right };

struct TableLayout {
  std::vector<Align> align;  // per column; columns past the list are right-aligned
  bool rule = false;         // a line of dashes under the header
};

// The header line and the body (rows, then the rule when asked for, each ending in '\n'),
// apart so that a caller can style the header. A left-aligned last column is not padded.
struct TableText {
  std::string header;
  std::string body;
};

TableText render_table(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows,
                       const TableLayout& layout);

// A field of a CSV line (RFC 4180): as it is, or quoted with its quotes doubled when it holds a
// comma, a quote or a line break.
std::string csv_field(const std::string& text);

// Code points in UTF-8 text: its width on a terminal for the scripts gpuscope prints.
std::size_t display_width(std::string_view text);

}  // namespace gpuscope::util
