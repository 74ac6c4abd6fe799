#include "analyze/work_units.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "core/regex_limits.hpp"

namespace gpuscope::analyze {

std::regex compile_work_regex(const std::string& pattern) {
  if (const auto past = regex_past_limits(pattern)) {
    throw Error::usage(fmt::format("--work-regex '{}' is too large a regular expression", pattern),
                       *past, "give a shorter pattern with smaller counts");
  }
  std::regex regex;
  try {
    regex = std::regex(pattern);
  } catch (const std::regex_error& e) {
    throw Error::usage(fmt::format("--work-regex '{}' is not a valid regular expression", pattern),
                       e.what(), "use ECMAScript syntax with one group, e.g. 'step ([0-9]+) done'");
  }
  if (regex.mark_count() < 1) {
    throw Error::usage(fmt::format("--work-regex '{}' has no group", pattern), {},
                       "put the amount in parentheses, e.g. 'processed ([0-9.]+) tokens'");
  }
  return regex;
}

std::optional<double> work_in_line(const std::regex& regex, const std::string& line) {
  std::smatch match;
  if (!std::regex_search(line.begin(), matched_end(line), match, regex)) return std::nullopt;
  try {
    const double work = std::stod(match[1].str());
    // "inf" or "nan" in a job's output is not an amount of work; it would poison the sum.
    if (!std::isfinite(work)) return std::nullopt;
    return work;
  } catch (const std::exception&) {
    return std::nullopt;  // a match whose group is not a number is not work
  }
}

}  // namespace gpuscope::analyze
