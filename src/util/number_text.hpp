// Numbers in text, read strictly.
#pragma once

#include <optional>
#include <string_view>

namespace gpuscope::util {

// The number `text` stands for, or nullopt: the whole text must be a decimal number (as
// std::from_chars reads it: no leading '+' or blanks, no hex) and finite.
std::optional<double> parse_finite_number(std::string_view text);

// The unsigned decimal integer `text` is, or nullopt: digits only (leading zeros allowed), whole
// text, no overflow.
std::optional<unsigned long long> parse_unsigned(std::string_view text);

}  // namespace gpuscope::util
