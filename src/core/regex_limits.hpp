// Limits on the regular expressions users give (--window-begin/--window-end, --work-regex),
// checked before std::regex sees them: libstdc++'s compiler overflows a signed long on a long
// back-reference number (undefined behaviour, found by fuzzing) and builds an automaton as large
// as a repetition count asks ('a{1000000000}').
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gpuscope {

inline constexpr std::size_t kMaxPatternBytes = 1000;
inline constexpr long kMaxPatternCount = 1000;  // back-reference numbers, {n,m} counts

// How much of an output line a pattern is matched against. libstdc++'s std::regex recurses once
// per character: `--work-regex '([0-9]+)'` over a 64 KiB line of digits overflowed the stack
// (SIGSEGV). Work counts and window markers sit near the start of their lines.
inline constexpr std::size_t kMaxMatchedLineBytes = 4096;

// The end of the part of `line` that patterns are matched against.
inline std::string::const_iterator matched_end(const std::string& line) {
  return line.begin() + static_cast<std::ptrdiff_t>(line.size() < kMaxMatchedLineBytes
                                                        ? line.size()
                                                        : kMaxMatchedLineBytes);
}

// Why `pattern` is past those limits, or nothing when it is within them.
std::optional<std::string> regex_past_limits(std::string_view pattern);

}  // namespace gpuscope
