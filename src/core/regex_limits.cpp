#include "core/regex_limits.hpp"

#include <cctype>

namespace gpuscope {

std::optional<std::string> regex_past_limits(std::string_view pattern) {
  if (pattern.size() > kMaxPatternBytes) {
    return "longer than " + std::to_string(kMaxPatternBytes) + " bytes";
  }
  // Every run of digits after a backslash or inside braces is a number the compiler parses.
  bool in_braces = false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '{') in_braces = true;
    if (pattern[i] == '}') in_braces = false;
    const bool escape = pattern[i] == '\\';
    const bool after_escape = escape && i + 1 < pattern.size() &&
                              std::isdigit(static_cast<unsigned char>(pattern[i + 1])) != 0;
    if (escape && !after_escape) {
      ++i;  // an escaped character ("\\", "\{") is skipped whole
      continue;
    }
    if (!after_escape && pattern[i] != '{' && !(in_braces && pattern[i] == ',')) continue;
    std::size_t j = i + 1;
    long value = 0;
    while (j < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[j])) != 0) {
      value = value * 10 + (pattern[j] - '0');
      if (value > kMaxPatternCount) {
        return after_escape ? "a back-reference past \\" + std::to_string(kMaxPatternCount)
                            : "a repetition count past " + std::to_string(kMaxPatternCount);
      }
      ++j;
    }
    i = j - 1;
  }
  return std::nullopt;
}

}  // namespace gpuscope
