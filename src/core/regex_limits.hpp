// Limits on the regular expressions users give (--window-begin/--window-end, --work-regex),
// checked before std::regex sees them: libstdc++'s compiler overflows a signed long on a long
// back-reference number (undefined behaviour, found by fuzzing) and builds an automaton as large
// as a repetition count asks ('a{1000000000}').
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpuscope {

inline constexpr std::size_t kMaxPatternBytes = 1000;
inline constexpr long kMaxPatternCount = 1000;  // back-reference numbers, {n,m} counts

// Why `pattern` is past those limits, or nothing when it is within them.
std::optional<std::string> regex_past_limits(std::string_view pattern);

}  // namespace gpuscope
