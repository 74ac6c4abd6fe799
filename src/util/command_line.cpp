#include "util/command_line.hpp"

#include <string_view>

namespace gpuscope::util {
namespace {

bool needs_quoting(const std::string& word) {
  if (word.empty()) return true;
  for (char c : word) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       std::string_view("-_./=:,+@%").find(c) != std::string_view::npos;
    if (!plain) return true;
  }
  return false;
}

}  // namespace

std::string shell_command_line(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& word : argv) {
    if (!out.empty()) out += ' ';
    if (!needs_quoting(word)) {
      out += word;
      continue;
    }
    out += '\'';
    for (char c : word) {
      if (c == '\'') {
        out += "'\\''";
      } else {
        out += c;
      }
    }
    out += '\'';
  }
  return out;
}

}  // namespace gpuscope::util
