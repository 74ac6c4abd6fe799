#include "util/number_text.hpp"

#include <charconv>
#include <cmath>
#include <system_error>

namespace gpuscope::util {

std::optional<double> parse_finite_number(std::string_view text) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || ptr != end || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

}  // namespace gpuscope::util

namespace gpuscope::util {

std::optional<unsigned long long> parse_unsigned(std::string_view text) {
  if (text.empty()) return std::nullopt;
  unsigned long long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace gpuscope::util
