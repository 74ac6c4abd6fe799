#include "ingest/logs/log_tally.hpp"

#include <fmt/format.h>

namespace gpuscope::ingest {

std::string line_list(const std::vector<std::size_t>& lines) {
  std::string out;
  for (std::size_t i = 0; i < lines.size() && i < 5; ++i) {
    out += fmt::format("{}{}", i == 0 ? "" : ", ", lines[i]);
  }
  if (lines.size() > 5) out += fmt::format(" and {} more", lines.size() - 5);
  return out;
}

void LogTally::say(const std::filesystem::path& file, const std::string& repeats,
                   std::vector<std::string>& notes) const {
  const std::string name = file.string();
  if (!repeats.empty() && !repeated_headers.empty()) {
    notes.push_back(fmt::format("{}: the header repeats at line{} {} ({}); read as one log", name,
                                repeated_headers.size() == 1 ? "" : "s",
                                line_list(repeated_headers), repeats));
  }
  if (!new_headers.empty()) {
    notes.push_back(
        fmt::format("{}: other columns from line{} {} on; each part read with its "
                    "own header",
                    name, new_headers.size() == 1 ? "" : "s", line_list(new_headers)));
  }
  // Grouped by why, so that "no gpuscope column" lists its columns in one note.
  std::map<std::string, std::string> by_why;
  for (const auto& [column, why] : left_out) {
    auto& list = by_why[why];
    list += (list.empty() ? "" : ", ") + column;
  }
  for (const auto& [why, columns] : by_why) {
    notes.push_back(fmt::format("{}: {}, left out: {}", name, why, columns));
  }
  for (const auto& [column, whys] : absent) {
    std::string text;
    for (const auto& [why, rows] : whys) {
      text += fmt::format("{}{} in {} row{}", text.empty() ? "" : ", ", why, rows,
                          rows == 1 ? "" : "s");
    }
    notes.push_back(fmt::format("{}: {} has no value ({}); left empty", name, column, text));
  }
  for (const auto& [why, rows] : skipped) {
    notes.push_back(
        fmt::format("{}: {} row{} left out: {}", name, rows, rows == 1 ? "" : "s", why));
  }
}

}  // namespace gpuscope::ingest
