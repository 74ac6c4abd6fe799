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
